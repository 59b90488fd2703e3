"""compare(): pairing by query id, refusals, the report's cells, JSON round trip, the TREC CLI's --compare."""

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest
import torch

from torch_ndcg.stats import compare, from_json, holm, paired_t_test, to_json, to_latex, to_markdown
from torch_ndcg.trec.__main__ import main

DATA = "tests/trec/data"


def _systems(seed=0, systems=4, queries=30):
    rng = np.random.default_rng(seed)
    base = rng.random(queries)
    return {f"sys{s}": {f"q{q}": float(np.clip(base[q] + 0.1 * s * rng.random(), 0, 1)) for q in range(queries)}
            for s in range(systems)}


def test_compare_pairs_by_query_id_whatever_the_order():
    systems = _systems()
    shuffled = {name: dict(reversed(list(values.items()))) for name, values in systems.items()}
    one, two = compare(systems), compare(shuffled)
    assert torch.equal(one.values, two.values)
    assert torch.equal(one.pvalues.nan_to_num(-1), two.pvalues.nan_to_num(-1))


def test_compare_matches_the_pairwise_tests_with_holm():
    systems = _systems(seed=1)
    result = compare(systems, correction="holm")
    table = result.values[0]
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    raw = torch.stack([paired_t_test(table[i], table[j]).pvalue for i, j in pairs])
    adjusted = holm(raw)
    for (i, j), p in zip(pairs, adjusted):
        assert float(result.pvalues[0, i, j]) == pytest.approx(float(p), abs=1e-15)
        assert float(result.pvalues[0, j, i]) == pytest.approx(float(p), abs=1e-15)
    means = table.mean(-1)
    beats = result.beats()[0]
    for i, j in pairs:
        assert bool(beats[i, j]) == bool(means[i] > means[j] and result.pvalues[0, i, j] <= 0.05)


def test_compare_refuses_mismatched_queries():
    systems = _systems()
    del systems["sys2"]["q7"]
    with pytest.raises(ValueError, match=r"'sys0' and 'sys2' were scored on different queries.*q7"):
        compare(systems)


def test_compare_refuses_bad_input():
    with pytest.raises(ValueError, match="test must be one of"):
        compare(torch.rand(3, 10), test="anova")
    with pytest.raises(ValueError, match="at least 2 systems"):
        compare(torch.rand(1, 10))
    with pytest.raises(ValueError, match="finite"):
        compare(torch.tensor([[0.1, float("nan")], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="systems must be 3 distinct names"):
        compare(torch.rand(3, 10), systems=["a", "b"])


def test_compare_takes_metric_style_per_query_pairs():
    ids = torch.tensor([3, 1, 2, 5])
    first = (ids, torch.tensor([0.5, 0.2, 0.9, 0.4], dtype=torch.float64))
    second = (ids.flip(0), torch.tensor([0.4, 0.9, 0.2, 0.4], dtype=torch.float64).flip(0))
    result = compare({"A": first, "B": second}, measures=["ndcg"])
    assert result.query_ids == ["1", "2", "3", "5"] and result.measures == ["ndcg"]
    assert result.values[0, 0].tolist() == [0.2, 0.9, 0.5, 0.4]
    assert result.values[0, 1].tolist() == [0.9, 0.2, 0.4, 0.4]


def test_report_cells_and_json_round_trip():
    result = compare(_systems(seed=2), alpha=0.05)
    markdown = to_markdown(result, digits=3)
    means = result.means[0]
    best = int(means.argmax())
    assert f"**{float(means[best]):.3f}**" in markdown
    for i, row in enumerate(markdown.splitlines()[2:6]):
        wins = "".join("abcd"[j] for j in range(4) if bool(result.beats()[0, i, j]))
        assert row.endswith(f"<sup>{wins}</sup> |" if wins else f"{float(means[i]):.3f} |" if i != best else "** |")
    assert "paired Student's t-test, Holm-corrected, p ≤ 0.05" in markdown
    assert "\\begin{tabular}" in to_latex(result)
    back = from_json(to_json(result))
    assert back.systems == result.systems and back.query_ids == result.query_ids
    assert torch.equal(back.values, result.values)
    assert torch.equal(back.pvalues.nan_to_num(-1), result.pvalues.nan_to_num(-1))
    assert to_markdown(back) == to_markdown(result)


def test_from_json_refuses_other_json():
    with pytest.raises(ValueError, match="not a comparison"):
        from_json('{"stat_test": "fisher"}')


def _cli(*args):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_cli_default_output_is_unchanged_by_the_new_options():
    runs = (f"{DATA}/qrels.test", f"{DATA}/results.test", f"{DATA}/results.trunc")
    _, plain = _cli("-c", "-m", "map", *runs)
    _, compared = _cli("-c", "-m", "map", *runs, "--compare", "md")
    assert compared.startswith(plain) and "| a | results.test |" in compared


def test_cli_json_report_reads_back(tmp_path):
    path = tmp_path / "report.json"
    code, printed = _cli("-c", "-m", "P.10", "-m", "ndcg_cut.10", f"{DATA}/qrels.test", f"{DATA}/results.test",
                         f"{DATA}/results.trunc", "--compare", "json", "--compare-output", str(path))
    assert code == 0 and "{" not in printed
    comparison = from_json(path)
    assert comparison.measures == ["P_10", "ndcg_cut_10"] and comparison.systems == ["results.test", "results.trunc"]
    assert json.loads(path.read_text())["test"] == "t-test"


def test_cli_refuses_runs_on_other_queries():
    with pytest.raises(SystemExit):
        _cli("-m", "map", f"{DATA}/qrels.test", f"{DATA}/results.test", f"{DATA}/results.trunc", "--compare", "md")
