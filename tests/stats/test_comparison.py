"""compare(): pairing by query id, refusals, the report's cells, JSON round trip, the TREC CLI's --compare."""

import io
import json
import shutil
from contextlib import redirect_stdout

import numpy as np
import pytest
import torch

from torch_ndcg.stats import (
    compare,
    from_json,
    holm,
    paired_t_test,
    randomisation_test,
    to_json,
    to_latex,
    to_markdown,
    wilcoxon_test,
)
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


def test_compare_refuses_query_ids_that_collide_as_text_naming_them():
    with pytest.raises(ValueError, match=r"1 and '1', which read the same as text"):
        compare({"A": {1: 0.5, "1": 0.7, "q2": 0.1}, "B": {"1": 0.4, "q2": 0.3, "q3": 0.2}})
    ids = [1, "1", 2]
    with pytest.raises(ValueError, match=r"1 and '1', which read the same as text"):
        compare({"A": (ids, [0.5, 0.7, 0.1]), "B": (ids, [0.4, 0.3, 0.2])})


def test_compare_refuses_system_names_that_collide_as_text():
    with pytest.raises(ValueError, match=r"system names 1 and '1'"):
        compare({1: {"q1": 0.5, "q2": 0.7}, "1": {"q1": 0.4, "q2": 0.3}, "B": {"q1": 0.1, "q2": 0.2}})


def test_compare_names_the_system_measure_and_query_of_a_non_finite_value():
    systems = _systems(systems=2, queries=5)
    systems["sys1"]["q3"] = float("nan")
    with pytest.raises(ValueError, match=r"system 'sys1', measure 'ndcg', query 'q3'.*empty='skip'"):
        compare(systems, measures=["ndcg"])


def test_compare_of_several_cutoffs_per_query_says_to_pick_a_column():
    ids = torch.tensor([1, 2, 3])
    values = torch.rand(3, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"\[Q, C\]: one column per cutoff.*values\[:, c\]"):
        compare({"A": (ids, values), "B": (ids, values.flip(0))})


@pytest.mark.parametrize("test", ["t-test", "wilcoxon", "randomisation"])
def test_json_keeps_the_raw_p_and_the_statistic(test):
    result = compare(_systems(systems=3, queries=12), test=test, correction="bonferroni", seed=1)
    table = result.values[0]
    direct = {"t-test": paired_t_test, "wilcoxon": lambda a, b: wilcoxon_test(a, b, zero_method="pratt"),
              "randomisation": lambda a, b: randomisation_test(a, b, generator=torch.Generator().manual_seed(1))}[test]
    expected = direct(table[0], table[2])
    assert float(result.raw_pvalues[0, 0, 2]) == pytest.approx(float(expected.pvalue), rel=1e-12)
    assert float(result.statistics[0, 0, 2]) == pytest.approx(float(expected.statistic), rel=1e-12)
    assert float(result.statistics[0, 2, 0]) == pytest.approx(float(expected.statistic) * (1 if test == "wilcoxon"
                                                                                          else -1), rel=1e-12)
    payload = json.loads(to_json(result))
    assert payload["raw_pvalues"][0][0][2] == float(result.raw_pvalues[0, 0, 2])
    back = from_json(to_json(result))
    for field in ("values", "pvalues", "raw_pvalues", "statistics", "effect_sizes"):
        assert torch.equal(getattr(back, field).nan_to_num(-7), getattr(result, field).nan_to_num(-7)), field


def test_from_json_validates_the_correction_on_read():
    payload = json.loads(to_json(compare(_systems(systems=2, queries=4))))
    payload["correction"] = "sidak"
    with pytest.raises(ValueError, match=r"malformed comparison JSON: unknown correction 'sidak'"):
        from_json(json.dumps(payload))


@pytest.mark.parametrize("key, value, message", [
    ("alpha", 2, "alpha must be a number in"), ("systems", ["a", "a"], "systems must be distinct"),
    ("pvalues", None, "pvalues must lie in"), ("values", None, "values holds 1 NaN"),
])
def test_from_json_refuses_what_compare_cannot_give(key, value, message):
    payload = json.loads(to_json(compare(_systems(systems=2, queries=4))))
    if key == "pvalues":
        payload[key][0][0][1] = 1.5
    elif key == "values":
        payload[key][0][0][1] = "nan"
    else:
        payload[key] = value
    with pytest.raises(ValueError, match=message):
        from_json(json.dumps(payload))


@pytest.mark.parametrize("text", ["[1, 2]", "", "results.json", "x" * 5000])
def test_from_json_never_opens_text_as_a_path(text):
    with pytest.raises(ValueError, match="not a JSON comparison|not a comparison written"):
        from_json(text)


def test_from_json_reads_text_and_files_with_a_byte_order_mark(tmp_path):
    text = to_json(compare(_systems(systems=2, queries=4)))
    assert from_json("\ufeff" + text).systems == ["sys0", "sys1"]
    path = tmp_path / "report.json"
    path.write_text("\ufeff" + text, encoding="utf-8")
    assert from_json(path).systems == ["sys0", "sys1"]


def test_from_json_reads_the_first_format_version_with_nan_raw_p():
    payload = json.loads(to_json(compare(_systems(systems=2, queries=4))))
    payload["version"] = 1
    del payload["raw_pvalues"], payload["statistics"]
    back = from_json(json.dumps(payload))
    assert bool(back.raw_pvalues.isnan().all()) and back.pvalues.shape == (1, 2, 2)


def test_latex_escapes_a_backslash_once():
    result = compare({"a\\b": {"q1": 0.9, "q2": 0.8}, "c{d}": {"q1": 0.1, "q2": 0.3}})
    latex = to_latex(result)
    assert " & a\\textbackslash{}b & " in latex and " & c\\{d\\} & " in latex
    assert "\\textbackslash\\{\\}" not in latex


def test_cli_compare_names_runs_with_one_tag_and_one_file_name_apart(tmp_path):
    paths = []
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        paths.append(str(tmp_path / folder / "results.test"))
        shutil.copy(f"{DATA}/results.test", paths[-1])
    report = tmp_path / "report.json"
    code, _ = _cli("-c", "-m", "map", f"{DATA}/qrels.test", *paths, f"{DATA}/results.trunc", "--compare", "json",
                   "--compare-output", str(report))
    assert code == 0
    assert from_json(report).systems == [*paths, "results.trunc"]


def test_cli_compare_refuses_one_run_file_given_twice(capsys):
    path = f"{DATA}/results.test"
    with pytest.raises(SystemExit):
        _cli("-c", "-m", "map", f"{DATA}/qrels.test", path, path, "--compare", "md")
    assert f"--compare needs distinct runs, but ['{path}'] were given more than once" in capsys.readouterr().err
