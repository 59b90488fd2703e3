"""The flat-losses benchmark runs end to end at tiny sizes and prints its rows."""

import torch

from benchmarks import flat_losses


def test_flat_losses_benchmark_quick(capsys):
    flat_losses.main(quick=True, argv=[])
    out = capsys.readouterr().out
    for loss in ("NeuralNDCG", "LambdaLoss"):
        rows = [line for line in out.splitlines() if line.startswith(loss)]
        forms = ("[1, n] calls", "flat (indexes=)", "padded [Q, max n]")
        assert len(rows) == 3 and all(form in row for form, row in zip(forms, rows))


def test_padded_form_holds_the_flat_lists():
    scores, relevance, indexes = flat_losses.flat_batch([3, 1, 2])
    padded, labels, mask = flat_losses._padded(scores, relevance, indexes)
    assert mask.sum(-1).tolist() == [3, 1, 2]
    for query in range(3):
        assert torch.equal(padded[query][mask[query]], scores[indexes == query])
        assert torch.equal(labels[query][mask[query]], relevance[indexes == query])
