"""The LETOR / SVMlight reader on small files written here, well-formed and malformed."""

import gzip

import pytest
import torch

from torch_ndcg.data import read_letor, read_letor_fold

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
