"""The LETOR / SVMlight reader on small files written here, well-formed and malformed."""

import gzip

import pytest
import torch

from torch_ndcg.data import find_fold_files, read_letor, read_letor_fold

GOOD = """\
# a comment-only line and a blank line are skipped

2 qid:10 1:0.5 3:1.5 # docid = a
0 qid:7 2:-1 3:2e-1
1 qid:10 1:1 2:2 3:3
3 qid:7 1:4   # qid 7 came between the lines of qid 10
0 qid:10
"""


def write(tmp_path, text, name="train.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_groups_out_of_order_queries_and_fills_sparse_features(tmp_path):
    ds = read_letor(write(tmp_path, GOOD))
    assert ds.qids == ["10", "7"]  # order of first appearance
    assert ds.num_features == 3  # inferred from the largest id
    x, y = ds[0]
    assert y.tolist() == [2.0, 1.0, 0.0]  # file order inside the query
    assert x.tolist() == [[0.5, 0.0, 1.5], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]
    x, y = ds[1]
    assert y.tolist() == [0.0, 3.0]
    assert torch.allclose(x, torch.tensor([[0.0, -1.0, 0.2], [4.0, 0.0, 0.0]]))


def test_given_num_features_pads_and_batches_pad_at_the_tail(tmp_path):
    ds = read_letor(write(tmp_path, GOOD), num_features=5)
    features, relevance, mask = next(ds.batches(2))
    assert features.shape == (2, 3, 5) and features.dtype == torch.float32
    assert mask.tolist() == [[True, True, True], [True, True, False]]
    assert relevance[1].tolist() == [0.0, 3.0, 0.0]
    assert features[1, 2].abs().sum() == 0


def test_gzip_file_reads_like_plain_text(tmp_path):
    path = tmp_path / "train.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write(GOOD)
    plain = read_letor(write(tmp_path, GOOD))
    zipped = read_letor(path)
    assert torch.equal(plain.features, zipped.features) and plain.qids == zipped.qids


@pytest.mark.parametrize(
    "line, message",
    [
        ("x qid:1 1:0.5", "label must be a number"),
        ("-1 qid:1 1:0.5", "label must be a finite number ≥ 0"),
        ("nan qid:1 1:0.5", "label must be a finite number ≥ 0"),
        ("1 1:0.5 2:0.1", "expected 'qid:<id>'"),
        ("1", "expected 'qid:<id>'"),
        ("1 qid: 1:0.5", "expected 'qid:<id>'"),
        ("1 qid:1 1=0.5", "expected '<feature id>:<value>'"),
        ("1 qid:1 a:0.5", "expected '<feature id>:<value>'"),
        ("1 qid:1 1:abc", "expected '<feature id>:<value>'"),
        ("1 qid:1 0:0.5", "feature id must be ≥ 1"),
        ("1 qid:1 1:0.5 1:0.7", "appears twice"),
        ("1 qid:1 1:nan", "must be finite"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, message):
    path = write(tmp_path, f"0 qid:1 1:1\n\n{line}\n0 qid:2 1:1\n")
    with pytest.raises(ValueError, match=message) as info:
        read_letor(path)
    assert f"{path}:3" in str(info.value)


def test_feature_id_above_given_num_features_is_an_error(tmp_path):
    path = write(tmp_path, "0 qid:1 1:1 4:2\n")
    with pytest.raises(ValueError, match=r"train.txt:1: feature id must be between 1 and num_features=3"):
        read_letor(path, num_features=3)


def test_empty_file_and_bad_num_features(tmp_path):
    with pytest.raises(ValueError, match="no items found"):
        read_letor(write(tmp_path, "# nothing\n\n"))
    with pytest.raises(ValueError, match="num_features"):
        read_letor(write(tmp_path, GOOD), num_features=0)


def test_reader_streams_many_chunks(tmp_path):
    # More rows than one storage chunk, with the width growing late in the file.
    rows = [f"{i % 3} qid:{i % 50} 1:{i}" for i in range(9000)] + ["4 qid:3 9:1"]
    ds = read_letor(write(tmp_path, "\n".join(rows) + "\n"))
    assert len(ds) == 50 and ds.num_features == 9 and ds.features.shape[0] == 9001
    x, y = ds[1]  # qid "1": rows 1, 51, 101, ...
    assert x[:3, 0].tolist() == [1.0, 51.0, 101.0]
    x, y = ds[3]
    assert y[-1] == 4 and x[-1].tolist() == [0.0] * 8 + [1.0]


def test_fold_pads_splits_to_one_feature_count(tmp_path):
    write(tmp_path, "1 qid:1 1:1\n0 qid:1 2:1\n", "train.txt")
    write(tmp_path, "1 qid:2 5:1\n", "vali.txt")
    write(tmp_path, "0 qid:3 1:1\n", "test.txt")
    fold = read_letor_fold(tmp_path)
    assert {name: ds.num_features for name, ds in fold.items()} == {"train": 5, "vali": 5, "test": 5}
    (tmp_path / "test.txt").unlink()
    with pytest.raises(ValueError, match="missing: test"):
        read_letor_fold(tmp_path)


def test_fold_layouts_gzip_without_vali_and_lightgbm_xgboost(tmp_path):
    for split in ("train", "test"):
        with gzip.open(tmp_path / f"{split}.txt.gz", "wt") as f:
            f.write(GOOD)
    fold = read_letor_fold(tmp_path)
    assert sorted(fold) == ["test", "train"] and fold["test"].qids == ["10", "7"]
    lightgbm = tmp_path / "lightgbm"
    lightgbm.mkdir()
    for split in ("train", "test"):
        write(lightgbm, "1 1:1\n0 2:1\n2 1:3\n", f"rank.{split}")
        write(lightgbm, "1\n2\n", f"rank.{split}.query")
    write(lightgbm, "unrelated\n", "README.md")
    fold = read_letor_fold(lightgbm)
    assert fold["train"].list_lengths.tolist() == [1, 2] and fold["test"].relevance.tolist() == [1.0, 0.0, 2.0]
    files = find_fold_files(lightgbm)
    assert files["train"] == (lightgbm / "rank.train", lightgbm / "rank.train.query") and "vali" not in files
    xgboost = tmp_path / "xgboost"
    xgboost.mkdir()
    for split in ("train", "vali", "test"):
        write(xgboost, "1 1:1\n0 2:1\n", f"mq2008.{split}")
        write(xgboost, "2\n", f"mq2008.{split}.group")
    assert {s: len(ds) for s, ds in read_letor_fold(xgboost).items()} == {"train": 1, "vali": 1, "test": 1}
    yahoo = tmp_path / "yahoo"
    yahoo.mkdir()
    for split in ("train", "valid", "test"):
        write(yahoo, GOOD, f"set1.{split}.txt")
    assert {s: len(ds) for s, ds in read_letor_fold(yahoo).items()} == {"train": 2, "vali": 2, "test": 2}


def test_fold_path_errors_say_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="missing_dir does not exist"):
        read_letor_fold(tmp_path / "missing_dir")
    with pytest.raises(ValueError, match="is a file; give the folder"):
        read_letor_fold(write(tmp_path, GOOD))
    write(tmp_path, GOOD, "a.test")
    write(tmp_path, GOOD, "b.test")
    with pytest.raises(ValueError, match=r"several test files \(a.test, b.test\)"):
        find_fold_files(tmp_path)


def test_round_trip_of_a_synthetic_set(tmp_path):
    from torch_ndcg.data import synthetic_letor

    original = synthetic_letor((6, 1, 1), num_features=5, list_length=(2, 6), seed=2)["train"]
    lines = []
    for q in range(len(original)):
        x, y = original[q]
        lines += [f"{int(label)} qid:{original.qids[q]} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row))
                  for row, label in zip(x.tolist(), y.tolist())]
    ds = read_letor(write(tmp_path, "\n".join(lines[1::2] + lines[0::2]) + "\n"))  # interleave the queries
    assert sorted(ds.qids, key=int) == original.qids
    for q, qid in enumerate(ds.qids):
        x, y = ds[q]
        expected = original[original.qids.index(qid)]
        # Items of a query keep their file order, which the interleaving changed: compare as sets.
        assert sorted(map(tuple, x.tolist())) == sorted(map(tuple, expected[0].tolist()))
        assert sorted(y.tolist()) == sorted(expected[1].tolist())


def test_rows_give_back_the_file_order_of_interleaved_queries(tmp_path):
    ds = read_letor(write(tmp_path, GOOD))
    # Item lines of GOOD, in file order: labels 2, 0, 1, 3, 0 (qids 10, 7, 10, 7, 10).
    assert ds.rows.tolist() == [0, 2, 4, 1, 3]
    assert ds.in_file_order(ds.relevance).tolist() == [2.0, 0.0, 1.0, 3.0, 0.0]


def test_group_file_gives_the_queries_of_lines_without_qid(tmp_path):
    path = write(tmp_path, "2 1:0.5 3:1.5\n0 2:-1\n# a comment\n1 1:1\n3 qid:99 1:4\n", "rank.train")
    sizes = write(tmp_path, "2\n\n2\n", "rank.train.query")
    ds = read_letor(path, groups=sizes)
    assert ds.qids == ["0", "1"] and ds.list_lengths.tolist() == [2, 2]
    assert ds.relevance.tolist() == [2.0, 0.0, 1.0, 3.0] and ds.features[3, 0] == 4  # qid:99 is ignored
    assert ds.rows.tolist() == [0, 1, 2, 3]
    write(tmp_path, "2\n3\n", "rank.train.query")
    with pytest.raises(ValueError, match="add up to 5 items, but .*rank.train holds 4 item lines"):
        read_letor(path, groups=sizes)
    write(tmp_path, "2\nx\n", "rank.train.query")
    with pytest.raises(ValueError, match=r"rank.train.query:2: expected one query size"):
        read_letor(path, groups=sizes)
    with pytest.raises(ValueError, match="expected 'qid:<id>'"):
        read_letor(path)  # without the sizes, qid is required


def test_a_huge_feature_id_is_refused_without_allocating_for_it(tmp_path):
    path = write(tmp_path, "1 qid:1 1:1\n0 qid:1 100000000:1\n")
    with pytest.raises(ValueError, match=r"train.txt:2: feature id 100000000 is above 65536.*pass num_features="):
        read_letor(path)


def test_memory_follows_the_data_not_a_block_of_the_largest_id(tmp_path):
    import tracemalloc

    path = write(tmp_path, "1 qid:1 1:1\n0 qid:1 1000000:1\n")
    tracemalloc.start()
    try:
        ds = read_letor(path, num_features=1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ds.features.shape == (2, 1_000_000) and ds.features[1, -1] == 1
    assert peak < 64 * 2**20  # the result is 8 MB; a 4,096-row block of this width would be 16 GB


def test_many_widening_blocks_still_read_in_order(tmp_path):
    rows = [f"{i % 4} qid:{i % 7} {1 + i % 300}:{i}" for i in range(5000)]
    ds = read_letor(write(tmp_path, "\n".join(rows) + "\n"))
    assert ds.num_features == 300 and ds.features.shape[0] == 5000
    back = ds.in_file_order(ds.features.sum(dim=1))
    assert back.tolist() == [float(i) for i in range(5000)]
