"""Dispatch ``python -m benchmarks <table>`` to the module that measures that table."""

from __future__ import annotations

import argparse
import importlib

TABLES = {
    "eval": "exact metrics against torchmetrics and scikit-learn",
    "losses": "NeuralNDCG / ApproxNDCG forward+backward time and peak memory; the standard losses vs allRank",
    "distill": "the distillation losses against sentence-transformers' (where installed)",
    "long_lists": "long lists (10,000 to 100,000 items, 64 x 16,384): the long-list NDCG@10 losses beside softmax and LambdaLoss",
    "flat_losses": "losses on flat items (indexes=) vs padded rows vs one call per list, skewed list sizes",
    "metrics": "stateful metric classes in a validation loop against torchmetrics",
    "gpu": "CUDA: losses (dense, streaming, Triton) and the exact metric",
    "reranking": "CrossEncoderRerankingEvaluator against sentence-transformers' (where installed)",
    "trec": "TREC run evaluation (read + evaluate) against ranx and pytrec_eval",
    "stats": "pairwise significance tests of many runs (randomisation, t-test) against ranx",
    "letor": "every loss (linear and MLP scorers) and LightGBM LambdaMART on the LETOR folds: tuned, 3 seeds, LETOR tool numbers",
    "letor_twins": "each metric's own smooth twin against NDCG's twin on the LETOR folds, tuned and judged on that metric",
    "clicks": "IPS losses on clicks against their label-based twins, forward+backward",
    "twins": "each metric's smooth twin beside the NDCG twin of the same relaxation, and on one 100,000-item list",
    "revisions": "the listwise losses against an earlier commit's (--base REV), side by side in one process",
    "retrieval": "chunked top-k over a catalogue of embeddings against a plain chunked torch.topk scan",
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("table", choices=sorted(TABLES), help="; ".join(f"{k}: {v}" for k, v in TABLES.items()))
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the benchmark runs")
    args, rest = parser.parse_known_args(argv)
    module = importlib.import_module(f"benchmarks.{args.table}")
    module.main(quick=args.quick, argv=rest)


if __name__ == "__main__":
    main()
