"""Reranking evaluation: our CrossEncoderRerankingEvaluator against sentence-transformers' own.

``python -m benchmarks reranking [--quick] [--queries 1000] [--candidates 100] [--repeats 5]``

Each query has ``--candidates`` documents from a first stage (the ``documents`` layout, so both
evaluators also report the ``base_*`` metrics of the first-stage order), 1 to 5 positives of
which one in five is missing from the candidates, and tie-free scores. Both evaluators are
called the same way, on the same samples, with a stub model whose ``predict`` returns the
precomputed scores of the pairs it is given (built once per evaluator, before timing), so the
times are the evaluators' own: reading the samples, the one ``predict`` call, and the metrics
(scikit-learn once per query there, a few padded batches here). Times are medians over
``--repeats`` rounds after one warm-up, the two evaluators interleaved in each round; the last
line is the ratio, and the largest difference between the two results (|Δ| ≤ 1e-9 passes).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


class PrecomputedScores:
    """A stand-in for a CrossEncoder: ``predict`` returns each pair's precomputed score."""

    def __init__(self, scores: dict[tuple[str, str], float]) -> None:
        self.scores = scores
        self.cached: tuple[list, np.ndarray] | None = None
        self.model_card_data = self

    def predict(self, pairs: list, **options: object) -> np.ndarray:
        # The pairs of one evaluator are the same on every call: look them up once.
        if self.cached is None or len(self.cached[0]) != len(pairs) or self.cached[0][::997] != pairs[::997]:
            self.cached = (pairs, np.array([self.scores[tuple(pair)] for pair in pairs], dtype=np.float32))
        return self.cached[1]

    def set_evaluation_metrics(self, *args: object) -> None:
        pass


def make_samples(queries: int, candidates: int, seed: int = 0) -> tuple[list[dict], dict[tuple[str, str], float]]:
    rng = np.random.default_rng(seed)
    samples, scores = [], {}
    values = iter(rng.permutation(queries * (candidates + 5)) / (queries * (candidates + 5)))  # distinct scores
    for q in range(queries):
        documents = [f"q{q}-doc{i}" for i in range(candidates)]
        chosen = rng.choice(candidates, size=int(rng.integers(1, 6)), replace=False)
        positive = [documents[i] if rng.random() < 0.8 else f"q{q}-missed{i}" for i in chosen]
        for document in documents + positive:
            scores[(f"query {q}", document)] = float(next(values))
        samples.append({"query": f"query {q}", "positive": positive, "documents": documents})
    return samples, scores


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks reranking", description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv or [])
    if quick:
        args.queries, args.candidates, args.repeats = 40, 20, 1

    from sentence_transformers.cross_encoder.evaluation import CrossEncoderRerankingEvaluator as Theirs

    from torch_ndcg.integrations.sentence_transformers import CrossEncoderRerankingEvaluator as Ours

    samples, scores = make_samples(args.queries, args.candidates)
    evaluators = {"sentence-transformers": Theirs(samples), "torch_ndcg": Ours(samples)}
    models = {name: PrecomputedScores(scores) for name in evaluators}
    results = {name: evaluator(models[name]) for name, evaluator in evaluators.items()}  # warm-up
    times: dict[str, list[float]] = {name: [] for name in evaluators}
    for _ in range(args.repeats):
        for name, evaluator in evaluators.items():
            start = time.perf_counter()
            results[name] = evaluator(models[name])
            times[name].append(time.perf_counter() - start)

    print(f"CrossEncoderRerankingEvaluator, {args.queries} queries × {args.candidates} candidates "
          f"(median of {args.repeats})")  # fmt: skip
    for name in evaluators:
        print(f"  {name:<22} {statistics.median(times[name]) * 1e3:10.2f} ms")
    ours, theirs = results["torch_ndcg"], results["sentence-transformers"]
    delta = max(abs(ours[key] - theirs[key]) for key in theirs)
    agree = ours.keys() == theirs.keys() and delta <= 1e-9
    ratio = statistics.median(times["sentence-transformers"]) / statistics.median(times["torch_ndcg"])
    print(f"  keys {sorted(theirs)}")
    print(f"  speed-up {ratio:.1f}×, max |Δ| {delta:.1e} {'ok' if agree else 'FAIL'}")
