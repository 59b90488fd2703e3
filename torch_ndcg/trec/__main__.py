"""Evaluate TREC runs as trec_eval does: ``python -m torch_ndcg.trec QRELS RUN [RUN ...] [options]``.

Prints what ``trec_eval`` prints for each run, in its format (``measure<TAB>qid<TAB>value``;
``all`` for the average over queries, ``-q`` adds one block per query). The qrels file
(``qid iter docno rel``) is read once for all the run files (``qid Q0 docno rank score tag``);
any of them may be gzipped (``.gz``).

measures (-m, repeatable, trec_eval's syntax such as ndcg_cut.5,10,20; without -m, trec_eval's
default set): ndcg, ndcg_cut.K, P.K, recall.K, map, map_cut.K, recip_rank, Rprec, success.K,
bpref, iprec_at_recall.L (L in [0, 1]), runid, num_q, num_ret, num_rel, num_rel_ret, gm_map; and,
beyond trec_eval, err_cut.K (ERR@K as gdeval), nerr_cut.K (ERR@K over the ideal ranking's),
rbp.P (rank-biased precision, persistence P in [0, 1], relevant = judged >= -l), rbp_residual.P
(what the unjudged and unretrieved documents could add to it) and judged.K (share of the top K
that is judged, as ir_measures' Judged@K).

example, on the small files in the repository's tests/trec/data:

    python -m torch_ndcg.trec -q -m ndcg_cut.3 -m P.2 -m recip_rank tests/trec/data/small.qrels tests/trec/data/small.run

    recip_rank            	q1	1.0000
    P_2                   	q1	0.5000
    ndcg_cut_3            	q1	0.9502
    recip_rank            	q2	0.5000
    P_2                   	q2	0.5000
    ndcg_cut_3            	q2	0.6309
    recip_rank            	all	0.7500
    P_2                   	all	0.5000
    ndcg_cut_3            	all	0.7906

conventions (trec_eval's): documents ranked by score as float64, ties broken by docno in
descending byte order, the rank column ignored; the ideal DCG ranks every judged document of the
query; NDCG's gain is the judged value (--gain exp2: 2**rel - 1); the other measures count a
document relevant when its value is >= -l; queries are those in both files (with -c, all of the
qrels'); a query without relevant documents scores 0. A malformed line, a NaN score or a docno
twice in one query is an error naming path:line. The full guide, with the Python interface:
``python -c "import torch_ndcg.trec; help(torch_ndcg.trec)"``.

--tsv PATH writes every per-query value of every run, full precision, one row per run and query:
the input of a significance test.

--compare {md,latex,json} adds, after trec_eval's lines, a comparison of the runs (at least two,
scored on the same queries: use -c when runs miss queries): each run's mean per measure with a
superscript letter for every run it beats significantly (--test, default the paired t-test;
--correction, default Holm's over the pairs of runs of each measure; --alpha, default 0.05) and
the queries each pair wins, ties and loses (torch_ndcg.stats; the JSON reads back with
torch_ndcg.stats.from_json(pathlib.Path(PATH))). --compare-output PATH writes it to PATH instead.
Each run is named by its tag; runs that share a tag by their file name, and runs that share that
too by their path as given; one file given twice is an error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from ..stats import TESTS, compare, to_json, to_latex, to_markdown
from ..stats.corrections import CORRECTIONS
from .evaluation import Evaluation, evaluate
from .names import COUNTS
from .reader import read_qrels, read_run

_NOT_PER_QUERY = ("runid", "num_q", "gm_map")  # trec_eval prints these on the "all" line only


def _value(name: str, value: object) -> str:
    if name == "runid":
        return str(value)
    if name in COUNTS or name == "num_q":
        return str(int(round(float(value))))
    return f"{float(value):6.4f}"


def format_evaluation(result: Evaluation, per_query: bool = False) -> str:
    """trec_eval's text for one run: ``-q`` blocks (if asked), then the ``all`` lines.

    Example:
        >>> from torch_ndcg.trec import evaluate
        >>> print(format_evaluation(evaluate("tests/trec/data/small.qrels", "tests/trec/data/small.run",
        ...                                  ["P.2", "map"])), end="")
        map                   	all	0.6667
        P_2                   	all	0.5000
    """
    lines = []
    if per_query:
        for i, qid in enumerate(result.qids):
            for name, values in result.per_query.items():
                if name not in _NOT_PER_QUERY:
                    lines.append(f"{name:<22}\t{qid}\t{_value(name, values[i])}")
    for name, value in result.summary.items():
        lines.append(f"{name:<22}\tall\t{_value(name, value)}")
    return "".join(line + "\n" for line in lines)


def write_tsv(results: Sequence[Evaluation], out: TextIO) -> None:
    """Per-query values of several runs as one table: ``runid qid <measure> ...``, full precision."""
    names = list(results[0].per_query) if results else []
    out.write("\t".join(["runid", "qid", *names]) + "\n")
    for result in results:
        columns = [result.per_query[name].tolist() for name in names]
        for i, qid in enumerate(result.qids):
            out.write("\t".join([result.runid, qid, *(repr(column[i]) for column in columns)]) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_ndcg.trec", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qrels", help="qrels file: qid iter docno rel (.gz read as gzip)")
    parser.add_argument("runs", nargs="+", help="run files: qid Q0 docno rank score tag (.gz read as gzip)")
    parser.add_argument("-m", dest="measures", action="append", metavar="MEASURE",
                        help="trec_eval measure, e.g. ndcg_cut.5,10 P.10 map bpref iprec_at_recall.0.5 "
                             "(repeatable; default: trec_eval's official set)")
    parser.add_argument("-q", dest="per_query", action="store_true", help="also print every query's values")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="average over all queries of the qrels; those missing from a run score 0")
    parser.add_argument("-l", dest="level", type=int, default=1, metavar="LEVEL",
                        help="smallest judged value that counts as relevant (default 1)")
    parser.add_argument("--gain", choices=("linear", "exp2"), default="linear",
                        help="NDCG gain: the judged value (trec_eval, default) or 2**rel - 1")
    parser.add_argument("--tsv", metavar="PATH", help="write every per-query value of every run to PATH")
    parser.add_argument("--compare", choices=("md", "latex", "json"),
                        help="also compare the runs pairwise: a significance report in this format")
    parser.add_argument("--compare-output", metavar="PATH", help="write the --compare report to PATH, not stdout")
    parser.add_argument("--test", choices=tuple(TESTS), default="t-test",
                        help="--compare's paired test (default t-test)")
    parser.add_argument("--alpha", type=float, default=0.05, help="--compare's significance threshold (default 0.05)")
    parser.add_argument("--correction", choices=CORRECTIONS, default="holm",
                        help="--compare's multiple-comparison correction over the pairs of runs (default holm)")
    parser.add_argument("--permutations", type=int, default=10_000,
                        help="--test randomisation's Monte-Carlo draws (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="--test randomisation's seed (default 0)")
    args = parser.parse_args(argv)
    try:
        if args.compare and len(args.runs) < 2:
            raise ValueError("--compare needs at least two run files")
        if args.compare_output and not args.compare:
            raise ValueError("--compare-output needs --compare FORMAT")
        for option, path in (("--tsv", args.tsv), ("--compare-output", args.compare_output)):
            if path:  # before the evaluation, which may take minutes, not after it
                _check_writable(option, path)
        qrels = read_qrels(args.qrels)
        results = []
        for path in args.runs:
            result = evaluate(qrels, read_run(path), args.measures, relevance_level=args.level,
                              complete=args.complete, gain=args.gain)
            _write(sys.stdout, format_evaluation(result, args.per_query))
            results.append(result)
        if args.tsv:
            with open(args.tsv, "w", encoding="utf-8", errors="surrogateescape") as out:
                write_tsv(results, out)
        if args.compare:
            names = run_names([r.runid for r in results], args.runs)
            report = compare_report(dict(zip(names, results)), args.compare, test=args.test, alpha=args.alpha,
                                    correction=args.correction, permutations=args.permutations, seed=args.seed)
            if args.compare_output:
                with open(args.compare_output, "w", encoding="utf-8", errors="surrogateescape") as out:
                    out.write(report)
            else:
                _write(sys.stdout, "\n" + report)
    except (OSError, ValueError, TypeError) as error:
        parser.exit(2, f"python -m torch_ndcg.trec: error: {error}\n")
    return 0


def run_names(runids: Sequence[str], paths: Sequence[str]) -> list[str]:
    """One distinct name per run for ``--compare``: its tag; where tags repeat, the file's name;
    where those repeat too, the path as given. The same file given twice is refused, naming it.

    Example:
        >>> run_names(["bm25", "bm25", "dense"], ["a/run.txt", "b/run.txt", "c/run.txt"])
        ['a/run.txt', 'b/run.txt', 'dense']
    """
    names = list(runids)
    for label in (os.path.basename, str):
        names = [label(path) if names.count(name) > 1 else name for name, path in zip(names, paths)]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"--compare needs distinct runs, but {repeated} were given more than once")
    return names


def compare_report(runs: dict[str, Evaluation], style: str, **options: object) -> str:
    """The runs (by name) compared on every per-query measure (counts and ``gm_map``'s logs left
    out), as ``"md"``, ``"latex"`` or ``"json"``; ``options`` go to :func:`torch_ndcg.stats.compare`."""
    first = next(iter(runs.values()))
    measures = [name for name in first.per_query if name not in COUNTS and name != "gm_map"]
    if not measures:
        raise ValueError("--compare needs a measure with per-query values (not only counts); add -m")
    comparison = compare(runs, measures=measures, **options)  # type: ignore[arg-type]
    return {"md": to_markdown, "latex": to_latex, "json": to_json}[style](comparison)


def _check_writable(option: str, path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a directory; give a file name")
    if not os.path.isdir(folder):
        raise ValueError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ValueError(f"{option} {path}: not writable")


def _write(out: TextIO, text: str) -> None:
    """``text`` with ids as the files' bytes (ids that are not UTF-8 carry surrogates)."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(text)
        return
    out.flush()
    buffer.write(text.encode("utf-8", "surrogateescape"))
    buffer.flush()


if __name__ == "__main__":
    sys.exit(main())
