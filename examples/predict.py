"""Score a LETOR / SVMlight file with a model saved by ``train_ranker.py --save-model DIR``.

    python examples/predict.py model/ MSLR-WEB10K/Fold1/test.txt --out test.scores
    python examples/predict.py model/ lambdarank/rank.test --groups lambdarank/rank.test.query --out rank.test.scores

Writes one score per item line of the file, in the file's own line order (what LightGBM,
XGBoost and most evaluators read), and prints the file's NDCG under the saved config's gain,
cutoffs and empty-query rule (the labels are in the file).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_ranker import conventions, evaluate, load_model, print_table, write_scores  # noqa: E402

from torch_ndcg.data import read_letor  # noqa: E402


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="the folder written by train_ranker.py --save-model")
    parser.add_argument("file", help="a LETOR / SVMlight file (.txt, .gz, or LightGBM / XGBoost's with --groups)")
    parser.add_argument("--groups", help="LightGBM .query / XGBoost .group file of query sizes, for lines without qid:")
    parser.add_argument("--out", required=True, help="where to write the scores, one per item line (must not exist)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        if out.exists():
            raise ValueError(f"--out {out}: already exists; choose a new file name")
        model, config = load_model(args.model)
        data = read_letor(args.file, num_features=model.num_features, groups=args.groups)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    threads = torch.get_num_threads()
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    try:
        write_scores(model, data, out)
        print(f"scored {data}; wrote {len(data.relevance)} scores to {out}, one per item line of {args.file}")
        result = evaluate(model, data, config)
    finally:
        torch.set_num_threads(threads)  # main() may run inside a bigger process (tests, notebooks)
    print(f"{conventions(config)}:")
    print_table(list(result), [[f"{value:.4f}" for value in result.values()]])
    return result


if __name__ == "__main__":
    main()
