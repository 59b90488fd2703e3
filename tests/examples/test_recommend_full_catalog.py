"""recommend_full_catalog.py: every loss trains and is reported; the data paths work offline."""

import math
import zipfile

import pytest
import recommend_full_catalog as example
import torch


@pytest.mark.slow
def test_quick_run_reports_every_loss_and_plots(tmp_path, capsys):
    chosen = example.main(["--quick", "--plot", str(tmp_path / "curves.png")])
    assert list(chosen) == list(example.LOSSES)
    for entry in chosen.values():
        (run,) = entry["runs"]
        assert len(run["curve"]) == 2 and max(run["curve"]) == run["best_validation"]
        assert 0 <= run["test"]["ndcg"] <= 1 and 0 <= run["test"]["recall"] <= 1
    out = capsys.readouterr().out
    assert "already-seen items excluded" in out and "binary relevance" in out and "| sampled-softmax" in out
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


def test_sampled_softmax_with_the_whole_catalogue_drawn_is_the_softmax_over_the_negatives():
    scores = torch.randn(3, 7, dtype=torch.float64)
    relevance = torch.zeros(3, 7)
    relevance[0, [1, 4]] = relevance[1, 0] = relevance[2, [2, 3, 6]] = 1
    # Every item drawn once: M q_j = 1, so the correction vanishes and the sum over the sample is
    # the sum over the user's non-relevant items exactly.
    value = example.sampled_softmax(scores, relevance, torch.arange(7))
    terms = []
    for u in range(3):
        negatives = scores[u][relevance[u] == 0]
        for p in relevance[u].nonzero().flatten():
            terms.append(-(scores[u, p] - torch.logsumexp(torch.cat([scores[u, p : p + 1], negatives]), 0)))
    assert value.item() == pytest.approx(torch.stack(terms).mean().item(), abs=1e-12)
    # Half the catalogue drawn: each drawn item stands for 7/3 items, log(M q) = log(3/7).
    drawn = torch.tensor([0, 5, 1])
    value = example.sampled_softmax(scores[:1], relevance[:1], drawn)
    negatives = scores[0, [0, 5]] + math.log(7 / 3)  # item 1 is the user's own: left out
    expected = [-(scores[0, p] - torch.logsumexp(torch.cat([scores[0, p : p + 1], negatives]), 0)) for p in (1, 4)]
    assert value.item() == pytest.approx(torch.stack(expected).mean().item(), abs=1e-12)


def test_bad_arguments_exit():
    with pytest.raises(SystemExit):
        example.main(["--epochs", "0"])
    with pytest.raises(SystemExit):
        example.main(["--losses", "hinge"])
