"""TREC run evaluation with trec_eval's conventions: read qrels and runs, score them as tensors.

``torch_ndcg.trec`` reads a qrels file (``qid iter docno rel``) and run files
(``qid Q0 docno rank score tag``; plain or ``.gz``) and computes what ``trec_eval`` prints. The
command line, ``python -m torch_ndcg.trec QRELS RUN [RUN ...]``, prints it in trec_eval's
format; its ``--help`` lists the measures and options. From Python the values are float64
tensors, one per measure:

>>> from torch_ndcg import trec
>>> qrels = trec.read_qrels("tests/trec/data/small.qrels")  # read once, share across runs
>>> result = trec.evaluate(qrels, trec.read_run("tests/trec/data/small.run"), ["ndcg_cut.3", "P.2", "map"])
>>> result.qids, result.per_query["ndcg_cut_3"], round(result.summary["map"], 4)
(['q1', 'q2'], tensor([0.9502, 0.6309], dtype=torch.float64), 0.6667)

Measures (``-m`` takes trec_eval's syntax, e.g. ``ndcg_cut.5,10,20``; a family without cutoffs
takes trec_eval's default cutoffs; without ``-m``, trec_eval's default set, all of it):
``ndcg``, ``ndcg_cut.K``, ``P.K``, ``recall.K``, ``map``, ``map_cut.K``, ``recip_rank``,
``Rprec``, ``success.K``, ``bpref``, ``iprec_at_recall.L`` (recall levels L in [0, 1]), and
``runid``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``gm_map``.
Beyond trec_eval (:mod:`torch_ndcg.trec.user_models` defines them): ``err_cut.K`` (ERR@K as
gdeval computes it), ``nerr_cut.K``, ``rbp.P`` (rank-biased precision with persistence P, as
ir_measures' ``RBP`` through cwl_eval), ``rbp_residual.P`` and ``judged.K`` (ir_measures'
``Judged@K``).

## Conventions (trec_eval's)

- A query's documents are ranked by score read as float64, descending; ties are broken by docno
  in descending byte order (``strcmp``); the rank column is ignored. ``ties="average"`` is not
  offered here: trec_eval's tie order is part of its numbers.
- The ideal DCG ranks every judged document of the query, retrieved or not. NDCG's gain is the
  judged value (values ≤ 0 gain nothing; ``-l`` does not apply to NDCG, as in trec_eval);
  ``--gain exp2`` uses 2^rel − 1 instead.
- For the other measures a document is relevant when its judged value is ≥ ``-l`` (default 1).
- The queries evaluated are those in both files; with ``-c``, every query of the qrels, and one
  missing from the run scores 0. A query without relevant documents scores 0.
- ``bpref`` counts as non-relevant the documents judged 0 ≤ value < ``-l`` and skips unjudged
  ones (a negative judged value is unjudged). ``iprec_at_recall`` level p is the best precision
  from the round(p·R)-th relevant document on (halves up, trec_eval 10's rule; trec_eval 9, which
  pytrec_eval-terrier wraps, uses int(p·R + 0.9), so their values differ at some levels).
- Refused with a ``ValueError`` naming ``path:line`` and the field: a line with too few fields
  (or a qrels line with too many; text after a run line's tag is ignored, as trec_eval does), a
  score that is not a number or is NaN, a relevance that is not an integer, and the same docno
  twice in one query (trec_eval stops with "duplicate docs" too).

## Agreement

The tests compare every measure per query with pytrec_eval (to 1e-6) on generated runs with
heavy ties, unjudged and negatively judged documents, graded labels, queries without relevant
documents and queries missing from either file, and compare the command's output line for line
with the expected outputs trec_eval ships for its own tests (the default set, ``-q``, ``-q -c``,
``-q -l2``). Two differences from trec_eval itself: without ``-c`` it stops with an error when a
query of the qrels is missing from the run (this package, like pytrec_eval, evaluates the shared
queries), and with ``-c`` and ``-l`` other than 1 its ``all`` line for ``num_rel`` counts judged
values > 0 (this package prints the sum of the per-query R it prints). pytrec_eval-terrier rounds
scores to float32; trec_eval and this package keep doubles.
"""

from .evaluation import Evaluation, evaluate
from .reader import Qrels, Run, read_qrels, read_run

__all__ = ["Evaluation", "Qrels", "Run", "evaluate", "read_qrels", "read_run"]
