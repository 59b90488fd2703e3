"""The losses benchmark runs end to end at tiny sizes and prints its table."""

import pytest

from benchmarks import losses


@pytest.mark.slow
def test_losses_benchmark_quick(capsys):
    losses.main(quick=True, argv=[])
    out = capsys.readouterr().out
    assert "NeuralNDCG" in out and "ApproxNDCG" in out and "stream MiB" in out
    assert "4 x 8 in a tight loop" in out and "auto with 1 Sinkhorn iteration" in out
    assert "torch.compile(loss, fullgraph=True) vs eager" in out
    dense_vs_streaming = out[out.index("losses on cpu") : out.index("standard losses on cpu")]
    rows = [line for line in dense_vs_streaming.splitlines() if line.startswith(("NeuralNDCG", "ApproxNDCG"))]
    assert len(rows) == 6


@pytest.mark.slow
def test_compile_table_prints_compiled_and_eager_side_by_side(capsys):
    losses._compile_table(quick=True)
    out = capsys.readouterr().out
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("ListNet"))
    eager, compiled, ratio = float(row[2]), float(row[3]), float(row[4].rstrip("x"))
    assert eager > 0 and compiled > 0 and ratio > 0
    assert any(line.strip().startswith("bare ListNet formula") for line in out.splitlines())


@pytest.mark.slow
def test_the_header_says_which_implementation_runs(capsys):
    losses.main(quick=True, argv=[])
    out = capsys.readouterr().out
    assert "impl='auto' for neural_ndcg: kernel" in out and "nothing compiled at run time" in out


@pytest.mark.slow
def test_one_case_in_a_fresh_process():
    result = losses._fresh_process("ApproxNDCG", "streaming", 2, 16, 3)
    assert result["seconds"] > 0 and result["peak_mib"] >= 0


def test_standard_losses_table_quick(capsys):
    from benchmarks import ranking_losses

    ranking_losses.table(quick=True)
    out = capsys.readouterr().out
    for name in ("ListNet", "ListMLE", "RankNet", "LambdaLoss", "Softmax CE", "Pairwise hinge", "ApproxNDCG"):
        assert name in out
    assert "allRank not installed" in out or "allRank 1.4.3" in out
    assert "process peak MiB" in out
    assert sum(line.startswith("  bare formula") for line in out.splitlines()) == 4  # ListNet, ListMLE × 2 sizes
    assert sum(line.startswith("  one torch op") for line in out.splitlines()) == 4  # ListNet, Softmax CE × 2 sizes


def test_bare_formulas_compute_the_losses():
    """The floor rows time the same losses: on unpadded lists without tied labels they equal ours."""
    import torch

    import torch_ndcg as tn
    from benchmarks.ranking_losses import floors

    scores = torch.randn(3, 7, dtype=torch.float64)
    labels = torch.stack([torch.randperm(7) for _ in range(3)]).double()
    torch.testing.assert_close(floors()["ListNet"](scores, labels), tn.listnet_loss(scores, labels, empty="keep"))
    torch.testing.assert_close(floors()["ListMLE"](scores, labels), tn.listmle_loss(scores, labels, empty="keep"))


def test_allrank_table_runs_with_or_without_allrank(capsys):
    losses._allrank_table(quick=True)
    out = capsys.readouterr().out
    assert "ListNet" in out and "auto/ListNet" in out
    assert ("not installed" in out) == (losses.allrank_neural_ndcg() is None)


@pytest.mark.slow
def test_kernel_peak_memory_in_a_fresh_process():
    assert losses._peak_in_fresh_process("kernel", 2, 16) >= 0


def test_epoch_table_prints_both_epochs_and_their_ratio(capsys):
    losses._epoch_table(quick=True)
    out = capsys.readouterr().out
    assert "NeuralNDCG/ListNet" in out and "lengths log-normal, median" in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("136-")]
    assert len(rows) == len(losses.EPOCH_SCORERS) == 2
    for row in rows:  # ListNet ms, NeuralNDCG ms and their ratio, as printed
        listnet, neural, ratio = float(row[-3]), float(row[-2]), float(row[-1].rstrip("x"))
        # The times print to 0.1 ms and the ratio to 0.01, each rounded from the exact values.
        slack = 0.005 + (neural / listnet) * (0.05 / listnet + 0.05 / neural)
        assert listnet > 0 and neural > 0 and ratio == pytest.approx(neural / listnet, abs=slack)
