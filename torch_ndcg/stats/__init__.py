"""Compare systems on the same queries, as IR papers do: paired tests, intervals, corrections, reports.

A comparison is data first: :func:`compare` takes per-query values by system and measure (a
tensor, mappings by query id, TREC evaluations or a metric's ``per_query()``), refuses systems
scored on different queries, and tests every pair on every measure at once. The report
(:func:`to_markdown`, :func:`to_latex`, :func:`to_json`; :func:`from_json` reads the JSON back)
is a pure function of that :class:`Comparison`.

The building blocks work on ``[..., Q]`` tensors of per-query values, vectorised over the
leading axes: :func:`paired_t_test`, :func:`wilcoxon_test`, :func:`randomisation_test`,
:func:`cohens_dz`, :func:`bootstrap_interval`, :func:`bonferroni`, :func:`holm`. They run in
float64 torch; scipy is not needed (the tests check them against it). Their inputs pass one
boundary (:mod:`torch_ndcg.stats.checks`): a NaN or infinite per-query value, a p-value outside
[0, 1] or a bad option is a ``ValueError``/``TypeError`` naming the argument, never a p-value.
"""

from .comparison import TESTS, Comparison, compare
from .corrections import bonferroni, holm
from .intervals import Interval, bootstrap_interval
from .report import from_json, to_json, to_latex, to_markdown
from .significance import TestResult, cohens_dz, paired_t_test, randomisation_test, wilcoxon_test

__all__ = [
    "TESTS",
    "Comparison",
    "Interval",
    "TestResult",
    "bonferroni",
    "bootstrap_interval",
    "cohens_dz",
    "compare",
    "from_json",
    "holm",
    "paired_t_test",
    "randomisation_test",
    "to_json",
    "to_latex",
    "to_markdown",
    "wilcoxon_test",
]
