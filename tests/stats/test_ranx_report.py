"""The report of real runs matches ranx's compare() table cell for cell (reference values committed
by tests/peer_values/ranx_compare.py): the TREC files of tests/trec/data and a generated run set."""

import json
import math
import re
from pathlib import Path

import pytest

from torch_ndcg.stats import compare
from torch_ndcg.stats.report import _rounded, letters
from torch_ndcg.trec import evaluate, read_qrels, read_run

HERE = Path(__file__).resolve().parents[1] / "peer_values"
REFERENCE = json.loads((HERE / "ranx_compare.json").read_text())
SUPERSCRIPTS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ"  # ranx's, for a..z


def _ranx_cells(table: str) -> list[list[tuple[float, str]]]:
    """ranx's printed table as (value, letters of the runs it beats) per run and measure."""
    rows = table.splitlines()[2:]
    cells = []
    for row in rows:
        fields = re.split(r"\s{2,}", row.strip())[2:]
        parsed = []
        for field in fields:
            number = re.match(r"[0-9.]+", field).group(0)
            parsed.append((float(number), "".join(chr(ord("a") + SUPERSCRIPTS.index(c)) for c in field[len(number):])))
        cells.append(parsed)
    return cells


def _ours(case: dict, test: str):
    qrels = read_qrels(HERE / case["qrels"])
    measures = list(REFERENCE["measures"].values())
    trec_measures = ["P.10", "ndcg_cut.10", "map", "recip_rank"]
    runs = {name: evaluate(qrels, read_run(HERE / path), trec_measures, complete=True)
            for name, path in zip(case["names"], case["runs"])}
    return compare(runs, measures=measures, test=test, alpha=REFERENCE["threshold"], correction="none",
                   permutations=100_000, seed=0)


@pytest.mark.parametrize("index", [
    pytest.param(i, marks=[pytest.mark.slow] if case["stat_test"] == "fisher" else [])  # 100,000 permutations
    for i, case in enumerate(REFERENCE["cases"])
])
def test_report_cells_equal_ranx(index):
    case = REFERENCE["cases"][index]
    test = "t-test" if case["stat_test"] == "student" else "randomisation"
    ours = _ours(case, test)
    names = letters(ours)
    measures = ours.measures
    means = ours.means
    beats = ours.beats()
    threshold, permutations = REFERENCE["threshold"], REFERENCE["permutations"]
    checked = 0
    for s, row in enumerate(_ranx_cells(case["table"])):
        name = case["names"][s]
        for m, (value, wins) in enumerate(row):
            assert _rounded(float(means[m, s]), 3) == value
            assert float(means[m, s]) == pytest.approx(case["means"][name][measures[m]], abs=1e-9)
            ours_wins = "".join(names[j] for j in range(len(names)) if bool(beats[m, s, j]))
            if test == "randomisation":
                # ranx's Monte-Carlo p is uncertain: a pair within 3 standard errors of the threshold may go either way.
                uncertain = {names[j] for j, other in enumerate(case["names"]) if other != name
                             and abs(case["pvalues"][name][other][measures[m]] - threshold)
                             <= 3 * math.sqrt(threshold * (1 - threshold) / permutations)}
                ours_wins = "".join(c for c in ours_wins if c not in uncertain)
                wins = "".join(c for c in wins if c not in uncertain)
            assert ours_wins == wins, (name, measures[m])
            checked += 1
    assert checked == len(case["names"]) * len(measures)


def test_t_test_pvalues_equal_ranx():
    for case in REFERENCE["cases"]:
        if case["stat_test"] != "student":
            continue
        ours = _ours(case, "t-test")
        for i, a in enumerate(case["names"]):
            for j, b in enumerate(case["names"]):
                for m, measure in enumerate(ours.measures):
                    if i != j:
                        assert float(ours.pvalues[m, i, j]) == pytest.approx(case["pvalues"][a][b][measure], abs=1e-10)
