"""The MovieLens-style readers and the per-user time split, on small stand-in files written here."""

import numpy as np
import pytest
import torch

from torch_ndcg.data import CatalogueSplits, Interactions, read_interactions

# (user, item, rating, timestamp): user 10's items out of time order in the file, user 9 with a
# tie in time (file order decides), user 3 with too few interactions for a held-out split.
ROWS = [
    (10, 50, 4, 300), (10, 7, 5, 100), (9, 7, 3, 100), (10, 100, 1, 200), (9, 50, 2, 100),
    (10, 8, 2, 400), (9, 100, 5, 50), (3, 8, 4, 10), (10, 9, 3, 500), (9, 9, 1, 600),
]


def write_udata(path, rows=ROWS):
    path.write_text("".join(f"{u}\t{i}\t{r}\t{t}\n" for u, i, r, t in rows))
    return path


def write_csv(path, rows=ROWS):
    # Columns in another order than ml-latest's: the header decides.
    path.write_text("timestamp,movieId,userId,rating\n" + "".join(f"{t},{i},{u},{r}.0\n" for u, i, r, t in rows))
    return path


def write_inter(path, rows=ROWS):
    header = "user_id:token\titem_id:token\trating:float\ttimestamp:float\tgenre:token_seq\n"
    path.write_text(header + "".join(f"{u}\t{i}\t{r}\t{t}\tDrama Comedy\n" for u, i, r, t in rows))
    return path


@pytest.fixture(params=["udata", "csv", "inter"])
def log(request, tmp_path):
    writer = {"udata": write_udata, "csv": write_csv, "inter": write_inter}[request.param]
    name = {"udata": "u.data", "csv": "ratings.csv", "inter": "ml.inter"}[request.param]
    return read_interactions(writer(tmp_path / name))


def test_every_layout_reads_the_same_log(log):
    assert (log.n_users, log.n_items, len(log)) == (3, 5, 10)
    assert log.user_ids == ["3", "9", "10"]  # numeric order, not text order
    assert log.item_ids == ["7", "8", "9", "50", "100"]
    assert log.users.tolist() == [2, 2, 1, 2, 1, 2, 1, 0, 2, 1]
    assert log.items.tolist() == [3, 0, 0, 4, 3, 1, 4, 1, 2, 2]
    assert log.ratings.tolist() == [4, 5, 3, 1, 2, 2, 5, 4, 3, 1]
    assert log.timestamps.tolist() == [300, 100, 100, 200, 100, 400, 50, 10, 500, 600]


def test_leave_last_out_follows_time_and_file_order_on_ties(log):
    splits = log.split(test=1, validation=1)
    users = torch.tensor([0, 1, 2])
    # User 10 (code 2) in time order: 7, 100, 50, 8, 9. User 9 (code 1): 100, then 7 and 50 tied at
    # time 100 (7 first in the file), then 9. User 3 (code 0) has one interaction: train only.
    assert splits.relevance("test", users).nonzero().tolist() == [[1, 2], [2, 2]]
    assert splits.relevance("validation", users).nonzero().tolist() == [[1, 3], [2, 1]]
    assert splits.relevance("train", users).nonzero().tolist() == [[0, 1], [1, 0], [1, 4], [2, 0], [2, 3], [2, 4]]
    assert splits.users("test").tolist() == [1, 2]
    assert splits.seen("validation", users).nonzero().tolist() == splits.relevance("train", users).nonzero().tolist()
    test_seen = splits.seen("test", users)
    assert torch.equal(test_seen, (splits.relevance("train", users) + splits.relevance("validation", users)) > 0)
    assert not splits.seen("train", users).any()
    assert splits.relevance("test", users, values="rating")[2].tolist() == [0, 0, 3, 0, 0]


def test_shares_round_half_up_and_too_few_stay_in_train():
    # One user with 25 interactions: 0.1 of 25 is 2.5, rounded to 3 (test) and 3 (validation).
    log = Interactions.from_arrays(users=[1] * 25 + [2] * 2, items=list(range(25)) + [0, 1])
    splits = log.split(test=0.1, validation=0.1)
    assert [splits.interactions(s) for s in ("train", "validation", "test")] == [19 + 2, 3, 3]
    rows = splits.relevance("test", torch.tensor([0]))
    assert rows[0].nonzero().flatten().tolist() == [22, 23, 24]  # the latest three (file order is time)
    # User 2 has two interactions; with one for each held-out split none would be left to train.
    assert splits.users("validation").tolist() == [0]
    assert log.split(test=1, validation=1).users("test").tolist() == [0]
    assert log.split(test=1, validation=0).users("test").tolist() == [0, 1]


def test_a_repeated_item_counts_once_at_its_latest_time():
    log = Interactions.from_arrays(users=[1, 1, 1, 1], items=["a", "b", "a", "c"], ratings=[1, 2, 5, 3],
                                   timestamps=[1, 2, 9, 3])
    splits = log.split(test=1, validation=0)
    assert splits.interactions("train") + splits.interactions("test") == 3
    assert splits.relevance("test", torch.tensor([0]), values="rating").tolist() == [[5, 0, 0]]  # "a" at time 9


def test_batches_cover_the_held_out_users_once(log):
    splits = log.split(test=1, validation=1)
    seen_users = []
    for users, relevance, seen in splits.batches("test", 1, shuffle=True, generator=torch.Generator().manual_seed(0)):
        assert relevance.shape == seen.shape == (1, log.n_items)
        assert relevance.sum() == 1 and not (seen & (relevance > 0)).any()
        seen_users += users.tolist()
    assert sorted(seen_users) == [1, 2]


def test_storage_follows_the_interactions_not_the_catalogue():
    gen = np.random.default_rng(0)
    users, items = gen.integers(0, 3_000, 40_000), gen.integers(0, 10**6, 40_000)
    splits = Interactions.from_arrays(users=users, items=items, timestamps=gen.random(40_000)).split()
    stored = sum(t.numel() * t.element_size() for part in splits._parts.values() for t in vars(part).values())
    assert splits.n_users * splits.n_items > 10**8  # a dense float32 matrix would take gigabytes
    assert stored < 3 * (splits.n_users + 1) * 8 + 40_000 * 16
    users = splits.users("test")[:4]
    assert splits.relevance("test", users).shape == (4, splits.n_items)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("u.data", "1\t2\t3\t4\n1\t2\t3\n", r"u\.data:2: expected 4 fields"),
        ("u.data", "1\t2\tfive\t4\n", r"u\.data:1: the rating must be a number, got 'five'"),
        ("u.data", "1\t2\t3\tnan\n", r"u\.data:1: the timestamp must be finite"),
        ("ratings.csv", "userId,movieId\n1,5\n ,5\n", r"ratings\.csv:3: the user and item ids must not be empty"),
        ("u.data", "\n\n", r"u\.data: no interactions found"),
        ("ratings.csv", "user,movie,rating\n1,2,3\n", r"ratings\.csv:1: the header must name the columns 'userId' and 'movieId'"),
        ("ratings.csv", "userId,movieId,rating,timestamp\n1,2,3,4\n1,2,3,4,5\n", r"ratings\.csv:3: expected 4 fields"),
        ("x.inter", "user_id:token\tscore:float\n1\t2\n", r"x\.inter:1: .*missing 'item_id'"),
        ("x.inter", "user_id:token\titem_id:token\trating:float\n1\t2\tinf\n", r"x\.inter:2: the rating must be finite"),
        # Finite, but inf once stored as float32.
        ("u.data", "1\t2\t3\t4\n1\t3\t1e39\t4\n", r"u\.data:2: the rating must be at most 3\.40282e\+38"),
        ("ratings.csv", "userId,movieId,rating\n1,2,-1e39\n", r"ratings\.csv:2: the rating must be at most"),
    ],
)
def test_malformed_files_name_the_file_and_line(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_interactions(path)


def test_the_largest_float32_rating_is_kept(tmp_path):
    path = tmp_path / "u.data"
    path.write_text("1\t2\t3.4e38\t4\n")
    assert read_interactions(path).ratings.tolist() == [np.float32(3.4e38)]


def test_ids_differing_in_undecodable_bytes_are_refused_naming_the_line_not_merged(tmp_path):
    # Two users, "café" and "cafè" in latin-1: neither is valid UTF-8, and replacing the bad byte
    # would make them one user.
    path = tmp_path / "u.data"
    path.write_bytes(b"1\t2\t3\t4\ncaf\xe9\t2\t3\t4\ncaf\xe8\t2\t3\t4\n")
    with pytest.raises(ValueError, match=r"u\.data:2: not valid utf-8"):
        read_interactions(path)
    log = read_interactions(path, encoding="latin-1")
    assert log.user_ids == ["1", "caf\xe8", "caf\xe9"] and log.users.tolist() == [0, 2, 1]


def test_an_undecodable_line_deep_in_a_file_is_named(tmp_path):
    # Far past the reader's first buffer, so the line comes from the bytes, not the buffer.
    path = tmp_path / "u.data"
    path.write_bytes(b"".join(b"%d\t2\t3\t4\n" % i for i in range(20000)) + b"\xff\t2\t3\t4\n")
    with pytest.raises(ValueError, match=r"u\.data:20001: not valid utf-8"):
        read_interactions(path)


def test_inter_without_rating_or_time_is_implicit_in_file_order(tmp_path):
    path = tmp_path / "x.inter"
    path.write_text("item_id:token\tuser_id:token\nb\tu\na\tu\nc\tu\n")
    log = read_interactions(path)
    assert log.item_ids == ["a", "b", "c"] and log.ratings.tolist() == [1, 1, 1]
    assert log.timestamps.tolist() == [2, 3, 4]  # line numbers
    assert log.split(test=1, validation=0).relevance("test", torch.tensor([0])).tolist() == [[0, 0, 1]]


def test_bad_options_are_named(tmp_path):
    with pytest.raises(ValueError, match="format must be one of"):
        read_interactions(write_udata(tmp_path / "u.data"), format="tsv")
    with pytest.raises(ValueError, match="encoding must be a text encoding Python knows"):
        read_interactions(write_udata(tmp_path / "u.data"), encoding="utf-9")
    log = read_interactions(write_udata(tmp_path / "u.data"), format="udata")
    for kwargs, message in [
        ({"test": -1}, "test as a count must be ≥ 0"),
        ({"validation": 1.5}, r"validation as a share must be in \[0, 1\)"),
        ({"test": 0.5, "validation": 0.5}, "shares must be < 1"),
        ({"test": "1"}, "test must be an int"),
    ]:
        with pytest.raises(ValueError, match=message):
            log.split(**kwargs)
    splits = log.split()
    assert isinstance(splits, CatalogueSplits)
    with pytest.raises(ValueError, match="split must be one of"):
        splits.users("valid")
    with pytest.raises(ValueError, match="user codes must be in"):
        splits.relevance("test", torch.tensor([3]))
    with pytest.raises(ValueError, match="values must be"):
        splits.relevance("test", torch.tensor([0]), values="graded")
    with pytest.raises(ValueError, match="batch_size must be"):
        next(splits.batches("test", 0))


@pytest.mark.parametrize("field", ["users", "items"])
def test_from_arrays_refuses_ids_that_collide_as_text(field):
    ids = {"users": [1, "1", 2], "items": ["a", "b", "c"]}
    if field == "items":
        ids = {"users": [1, 2, 3], "items": [7, "7", 8]}
    with pytest.raises(ValueError, match=rf"^{field} holds the ids .* which read the same as text"):
        Interactions.from_arrays(**ids)


def test_from_arrays_keeps_one_id_given_as_python_and_numpy_ints():
    log = Interactions.from_arrays(users=[1, np.int64(1), 2], items=["a", "b", "a"])
    assert log.n_users == 2 and log.user_ids == ["1", "2"]
