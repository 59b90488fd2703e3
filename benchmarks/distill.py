"""Distillation losses table: forward+backward time of each, against sentence-transformers' own.

``python -m benchmarks.distill [--quick] [--rounds R]``, one CPU thread, float32, 64 lists
of 100 items with teacher logits as the target. Each round times every implementation once, in
turn (interleaved, so a change of machine load hits all of them), and the table gives the
median over the rounds.

Where sentence-transformers is installed (an optional benchmark dependency, with its own
torch), each loss is timed next to its cross-encoder loss of the same formula. Those take
``(queries, documents)`` texts and score them with a model inside ``forward``; here the model is
a lookup of fixed scores, fed all pairs in one call (``mini_batch_size=-1``), so its time is
the loss's own work: building the padded score and label matrices from the ragged lists, and
the formula. Without the package the table has our column only.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

import torch_ndcg as tn

OURS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "ListNet (T=1)": tn.distill_listnet_loss,
    "ListMLE": tn.distill_listmle_loss,
    "PListMLE": lambda s, t: tn.distill_listmle_loss(s, t, position_aware=True),
    "RankNet (soft targets)": tn.distill_ranknet_loss,
    "MarginMSE (pairs=first)": lambda s, t: tn.margin_mse_loss(s, t, pairs="first"),
    "ADR-MSE": tn.adr_mse_loss,
}
ST_NAMES = {
    "ListNet (T=1)": "ListNetLoss",
    "ListMLE": "ListMLELoss",
    "PListMLE": "PListMLELoss",
    "RankNet (soft targets)": "RankNetLoss",
    "MarginMSE (pairs=first)": "MarginMSELoss",
    "ADR-MSE": "ADRMSELoss",
}


def _sentence_transformers(batch: int, length: int, scores: torch.Tensor, teacher: torch.Tensor):
    """``{name: run}`` where ``run()`` is one forward+backward of sentence-transformers' loss on
    the same scores and targets, or None when the package is not installed."""
    try:
        from sentence_transformers.cross_encoder import CrossEncoder  # type: ignore[import-not-found]
        from sentence_transformers.cross_encoder import losses as st  # type: ignore[import-not-found]
    except ImportError:
        return None

    class ScoreLookup(CrossEncoder):
        """Scores every pair of one call by position: the loss sends all pairs at once, in order."""

        def __init__(self) -> None:
            torch.nn.Module.__init__(self)
            self.leaf = scores.reshape(-1).clone()

        @property
        def num_labels(self) -> int:
            return 1

        @property
        def device(self) -> torch.device:
            return torch.device("cpu")

        def preprocess(self, pairs, prompt=None, task=None):  # noqa: ANN001
            return {"count": len(pairs)}

        def forward(self, tokens):  # noqa: ANN001
            return {"scores": self.leaf[: tokens["count"]]}

    class ColumnLookup(ScoreLookup):
        """For MarginMSELoss, which scores the positives, then each column of negatives, in turn."""

        def reset(self) -> None:
            self.leaf = scores.clone().requires_grad_(True)
            self.column = 0

        def preprocess(self, pairs, prompt=None, task=None):  # noqa: ANN001
            column, self.column = self.column, self.column + 1
            return {"column": column}

        def forward(self, tokens):  # noqa: ANN001
            return {"scores": self.leaf[:, tokens["column"]]}

    model = ScoreLookup()
    queries = [f"q{b}" for b in range(batch)]
    documents = [[f"d{i}" for i in range(length)] for _ in range(batch)]
    labels = list(teacher.unbind(0))
    listwise = {
        "ListNet (T=1)": st.ListNetLoss(model, mini_batch_size=-1),
        "ListMLE": st.ListMLELoss(model, mini_batch_size=-1, respect_input_order=False),
        "PListMLE": st.PListMLELoss(model, mini_batch_size=-1, respect_input_order=False),
        "RankNet (soft targets)": st.RankNetLoss(model, mini_batch_size=-1),
        "ADR-MSE": st.ADRMSELoss(model, mini_batch_size=-1),
    }
    # MarginMSELoss: (query, positive, negatives…) columns; it scores one column per call.
    columns = [queries, *[[f"d{i}"] * batch for i in range(length)]]
    column_model = ColumnLookup()
    margin = st.MarginMSELoss(column_model)

    def listwise_run(loss):
        def run() -> None:
            model.leaf = scores.reshape(-1).clone().requires_grad_(True)
            loss([queries, documents], labels).backward()
        return run

    def margin_run() -> None:
        column_model.reset()
        margin(columns, teacher).backward()

    runs = {name: listwise_run(loss) for name, loss in listwise.items()}
    runs["MarginMSE (pairs=first)"] = margin_run
    return runs


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.distill", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the benchmark runs")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    quick = quick or args.quick
    batch, length = (4, 8) if quick else (64, 100)
    rounds = args.rounds or (2 if quick else 15)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(batch, length, generator=gen)
    teacher = 3 * torch.randn(batch, length, generator=gen) - 2  # teacher logits, mostly negative

    def ours(loss):
        def run() -> None:
            leaf = scores.clone().requires_grad_(True)
            loss(leaf, teacher).backward()
        return run

    theirs = _sentence_transformers(batch, length, scores, teacher)
    runs = {(name, "ours"): ours(loss) for name, loss in OURS.items()}
    if theirs is not None:
        runs.update({(name, "st"): run for name, run in theirs.items()})
    times: dict[tuple[str, str], list[float]] = {key: [] for key in runs}
    for run in runs.values():  # warm-up
        run()
    for _ in range(rounds):
        for key, run in runs.items():
            start = time.perf_counter()
            run()
            times[key].append(time.perf_counter() - start)
    median = {key: statistics.median(values) * 1e3 for key, values in times.items()}

    print(f"distillation losses, forward+backward, {batch} lists x {length} items, float32, 1 thread, "
          f"median of {rounds} interleaved rounds (ms)")
    if theirs is None:
        print("sentence-transformers is not installed: our column only (pip install sentence-transformers)")
        print("| loss | torch_ndcg |")
        print("|---|---:|")
        for name in OURS:
            print(f"| {name} | {median[(name, 'ours')]:.2f} |")
        return
    import sentence_transformers  # type: ignore[import-not-found]

    print(f"against sentence-transformers {sentence_transformers.__version__}'s cross-encoder losses "
          "(ratio > 1: torch_ndcg is faster)")
    print("| loss | sentence-transformers loss | torch_ndcg | sentence-transformers | ratio |")
    print("|---|---|---:|---:|---:|")
    for name in OURS:
        ours_ms, st_ms = median[(name, "ours")], median[(name, "st")]
        print(f"| {name} | {ST_NAMES[name]} | {ours_ms:.2f} | {st_ms:.2f} | {st_ms / ours_ms:.2f}x |")


if __name__ == "__main__":
    main()
