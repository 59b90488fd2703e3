"""recommend_full_catalog.py: every loss trains and is reported; the data paths work offline."""

import zipfile

import pytest
import recommend_full_catalog as example
import torch


@pytest.mark.slow
def test_quick_run_reports_every_loss_and_plots(tmp_path, capsys):
    chosen = example.main(["--quick", "--plot", str(tmp_path / "curves.png")])
    assert [entry["setting"].loss for entry in chosen.values()] == list(example.LOSSES)
    for entry in chosen.values():
        (run,) = entry["runs"]
        assert len(run["curve"]) <= 2 and max(run["curve"]) == run["best_validation"]
        assert 0 <= run["test"]["ndcg"] <= 1 and 0 <= run["test"]["recall"] <= 1
    out = capsys.readouterr().out
    assert "already-seen items excluded" in out and "binary relevance" in out and "| sampled-softmax (100 uniform, logQ)" in out
    assert (tmp_path / "curves.png").stat().st_size > 0


def stand_in_rows(users=12, items=30):
    """Every user rates 8 items at distinct times: enough for a 10%/10% time split per user."""
    gen = torch.Generator().manual_seed(0)
    rows = []
    for user in range(users):
        for t, item in enumerate(torch.randperm(items, generator=gen)[:8].tolist()):
            rows.append((user + 1, item + 1, 1 + t % 5, 1000 * user + t))
    return rows


def test_reads_a_file_and_ml_100k_from_a_cached_wheel_without_network(tmp_path, monkeypatch):
    path = tmp_path / "u.data"
    path.write_text("".join(f"{u}\t{i}\t{r}\t{t}\n" for u, i, r, t in stand_in_rows()))
    chosen = example.main(["--data", str(path), "--quick", "--losses", "softmax"])
    assert set(chosen) == {"softmax"}
    # A wheel already in the cache is read, not downloaded again: pip must not run.
    with zipfile.ZipFile(tmp_path / "recbole-1.2.1-py3-none-any.whl", "w") as wheel:
        header = "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
        wheel.writestr(example.ML_100K_MEMBER, header + "".join(f"{u}\t{i}\t{r}\t{t}\n" for u, i, r, t in stand_in_rows()))
    monkeypatch.setattr(example.subprocess, "run", lambda *a, **k: pytest.fail("pip ran"))
    log = example.read_interactions(example.ml_100k(tmp_path))
    assert (log.n_users, len(log)) == (12, 96)
    assert (tmp_path / "ml-100k.inter").exists()  # extracted once, read from there next time


def test_sampled_lists_are_each_users_training_items_against_the_drawn_items_without_accidental_hits():
    scores = torch.randn(3, 7)
    relevance = torch.zeros(3, 7)
    relevance[0, [1, 4]] = relevance[1, 0] = relevance[2, [2, 3, 6]] = 1
    counts = torch.tensor([5, 1, 1, 1, 1, 1, 1])
    splits = type("Splits", (), {"n_items": 7, "item_counts": lambda self, split: counts})()
    for name, q in (("uniform", torch.full((7,), 1 / 7)), ("popularity", (counts + 1) / (counts + 1).sum())):
        sampler = example.Sampler.named(name, splits)
        torch.testing.assert_close(sampler.q, q.float())
        drawn = sampler.draw(50, torch.Generator().manual_seed(0))
        lists = sampler.lists(scores, relevance, drawn, "logq")
        for u in range(3):
            real = lists.positive_scores[u][lists.positive_mask[u]]
            assert sorted(real.tolist()) == sorted(scores[u][relevance[u] > 0].tolist())
        assert torch.equal(lists.negative_scores, scores[:, drawn])
        assert torch.equal(lists.negative_mask, relevance[:, drawn] == 0)  # a drawn item the user has: masked
        torch.testing.assert_close(lists.negative_log_q, sampler.q[drawn].log())
        assert sampler.lists(scores, relevance, drawn, "none").negative_log_q is None
        assert lists.positive_log_q is None
        every = sampler.lists(scores, relevance, drawn, "logq-all")
        torch.testing.assert_close(every.negative_log_q, lists.negative_log_q)
        for u in range(3):  # "logq-all": each real positive carries its own item's log q
            got = every.positive_log_q[u][every.positive_mask[u]]
            assert sorted(got.tolist()) == sorted(sampler.q[relevance[u] > 0].log().tolist())


def test_sampled_ndcg_in_groups_of_users_is_the_loss_over_the_whole_batch():
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(9, 30, generator=gen, dtype=torch.float64, requires_grad=True)
    relevance = (torch.rand(9, 30, generator=gen) < torch.linspace(0.05, 0.6, 9)[:, None]).double()
    relevance[4] = 0  # a user without items is skipped, as the loss's own mean skips it
    sampler = example.Sampler(torch.full((30,), 1 / 30, dtype=torch.float64))
    drawn = sampler.draw(12, gen)
    whole = example.tn.sampled.sampled_ndcg_loss(sampler.lists(scores, relevance, drawn, "logq"), example.K, temperature=0.5)
    grouped = example.sampled_ndcg(scores, relevance, drawn, "logq", sampler, example.K, 0.5, group=2)
    torch.testing.assert_close(grouped, whole)
    torch.testing.assert_close(torch.autograd.grad(grouped, scores)[0], torch.autograd.grad(whole, scores)[0])


def test_a_run_stops_once_validation_stops_improving():
    splits = example.synthetic(60, 120).split(test=0.1, validation=0.1)
    run = example.train(example.Setting("softmax", 0.1, None), splits, 0, 200, 8, 32, 2)
    curve = run["curve"]
    assert len(curve) < 200 and max(curve) == run["best_validation"]
    assert all(value <= max(curve[:-2]) for value in curve[-2:])  # the last 2 epochs did not improve
    assert max(curve[:-2]) > max(curve[:-3] or [-1.0])  # the best epoch is the last before the patience ran out


def test_a_run_on_a_validation_plateau_trains_at_least_min_epochs():
    # At a tiny learning rate validation NDCG@10 barely moves: patience 1 alone would stop at once.
    splits = example.synthetic(60, 120).split(test=0.1, validation=0.1)
    setting = example.Setting("softmax", 1e-6, None)
    assert len(example.train(setting, splits, 0, 50, 8, 32, 1)["curve"]) < 8
    assert len(example.train(setting, splits, 0, 50, 8, 32, 1, min_epochs=8)["curve"]) >= 8


@pytest.mark.slow
def test_sampled_losses_run_on_the_synthetic_stand_in_with_every_sampler_and_correction(capsys):
    chosen = example.main(["--quick", "--losses", "softmax", "sampled-softmax", "sampled-ndcg", "gbce", "--negatives", "30",
                           "--samplers", "uniform", "popularity", "--corrections", "logq", "logq-all", "none"])  # fmt: skip
    assert sorted(chosen) == sorted([
        "softmax", *(f"sampled-softmax (30 {sampler}, {fix})" for sampler in ("uniform", "popularity")
                     for fix in ("logQ", "logQ on every logit", "no logQ")),
        "sampled-ndcg (30 uniform, logQ)", "sampled-ndcg (30 uniform, no logQ)",
        "sampled-ndcg (30 popularity, logQ)", "sampled-ndcg (30 popularity, no logQ)",
        "gbce (30 uniform, no logQ)", "gbce (30 popularity, no logQ)",
    ])  # fmt: skip
    assert "vs softmax" in capsys.readouterr().out


def test_bad_arguments_exit():
    with pytest.raises(SystemExit):
        example.main(["--epochs", "0"])
    with pytest.raises(SystemExit):
        example.main(["--losses", "hinge"])
    with pytest.raises(SystemExit):
        example.main(["--samplers", "zipf"])
    with pytest.raises(SystemExit):
        example.main(["--patience", "0"])
    with pytest.raises(SystemExit):
        example.main(["--min-epochs", "-1"])
