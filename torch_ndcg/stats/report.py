"""A :class:`~torch_ndcg.stats.Comparison` as a table (Markdown, LaTeX) or as JSON, and back from JSON.

The table gives each system a letter and its mean on each measure; a superscript lists the
letters of the systems it beats significantly (higher mean, p ≤ alpha after the correction),
as in ranx's ``compare`` report; the best mean of each measure is bold. A second table counts,
for every pair, the queries each wins, ties and loses. The caption names the test, the
correction and the threshold. Every function here is a pure function of the comparison.
"""

from __future__ import annotations

import json
import math
import os
import string

import torch

from .checks import check_count, check_open_unit, per_query_values, pvalue_table
from .comparison import TESTS, Comparison
from .corrections import CORRECTIONS

__all__ = ["from_json", "to_json", "to_latex", "to_markdown"]

_LETTERS = string.ascii_lowercase + string.ascii_uppercase
_FORMAT = "torch_ndcg.stats.Comparison"
_VERSION = 2  # 2 added the raw p-values and the tests' statistics


def letters(comparison: Comparison) -> list[str]:
    """One letter per system, in order: a, b, …, z, A, …, Z."""
    if len(comparison.systems) > len(_LETTERS):
        raise ValueError(f"a report letters at most {len(_LETTERS)} systems, got {len(comparison.systems)}")
    return list(_LETTERS[: len(comparison.systems)])


def caption(comparison: Comparison) -> str:
    """The sentence that says what a superscript means."""
    test = TESTS[comparison.test]
    if comparison.test == "randomisation":
        n = len(comparison.query_ids)
        if 2**n <= comparison.permutations:  # what randomisation_test's method="auto" does
            test += f", exact over all 2^{n} sign flips"
        else:
            test += f", {comparison.permutations:,} permutations" + ("" if comparison.seed is None else
                                                                      f", seed {comparison.seed}")
    corrected = {"none": "", "bonferroni": ", Bonferroni-corrected", "holm": ", Holm-corrected"}[comparison.correction]
    return (f"Mean over {len(comparison.query_ids)} queries; the best in bold. A superscript letter marks a "
            f"significant win over that system ({test}{corrected}, p ≤ {comparison.alpha:g}).")


def _cells(comparison: Comparison, digits: int) -> list[list[tuple[str, str, bool]]]:
    """Per system and measure: (the rounded mean, the letters it beats, whether it is the best)."""
    names = letters(comparison)
    beats = comparison.beats()
    means = comparison.means
    rows = []
    for s in range(len(comparison.systems)):
        row = []
        for m in range(len(comparison.measures)):
            rounded = _rounded(float(means[m, s]), digits)
            best = rounded == max(_rounded(float(v), digits) for v in means[m])
            wins = "".join(names[j] for j in range(len(names)) if bool(beats[m, s, j]))
            row.append((f"{rounded:.{digits}f}", wins, best))
        rows.append(row)
    return rows


def _rounded(value: float, digits: int) -> float:
    # A mean of decimal per-query values (P@10 = 0.7, ...) is often a decimal tie such as 0.8425
    # that float summation leaves a last bit below or above; rounding to 12 digits first makes the
    # displayed digits those of the decimal mean, whatever the order of summation.
    return round(round(value, 12), digits)


def to_markdown(comparison: Comparison, *, digits: int = 4) -> str:
    """The comparison as Markdown: the table of means with superscripts, then wins/ties/losses.

    Example:
        >>> from torch_ndcg.stats import compare, to_markdown
        >>> result = compare({"A": {"q1": 0.9, "q2": 0.8, "q3": 0.7}, "B": {"q1": 0.5, "q2": 0.6, "q3": 0.4}},
        ...                  measures=["ndcg@10"], alpha=0.1)
        >>> print(to_markdown(result, digits=3))  # doctest: +NORMALIZE_WHITESPACE
        | # | System | ndcg@10 |
        |---|---|---|
        | a | A | **0.800**<sup>b</sup> |
        | b | B | 0.500 |
        <BLANKLINE>
        Mean over 3 queries; the best in bold. A superscript letter marks a significant win over that system (paired Student's t-test, Holm-corrected, p ≤ 0.1).
        <BLANKLINE>
        | Queries won/tied/lost | ndcg@10 |
        |---|---|
        | a vs b | 3/0/0 |
    """
    names = letters(comparison)
    header = "| # | System | " + " | ".join(_escape_md(m) for m in comparison.measures) + " |"
    lines = [header, "|---|---|" + "---|" * len(comparison.measures)]
    for s, row in enumerate(_cells(comparison, digits)):
        cells = []
        for value, wins, best in row:
            cell = f"**{value}**" if best else value
            cells.append(cell + (f"<sup>{wins}</sup>" if wins else ""))
        lines.append(f"| {names[s]} | {_escape_md(comparison.systems[s])} | " + " | ".join(cells) + " |")
    lines += ["", caption(comparison), ""]
    lines.append("| Queries won/tied/lost | " + " | ".join(_escape_md(m) for m in comparison.measures) + " |")
    lines.append("|---|" + "---|" * len(comparison.measures))
    for i, j, counts in _pair_counts(comparison):
        lines.append(f"| {names[i]} vs {names[j]} | " + " | ".join(counts) + " |")
    return "\n".join(lines) + "\n"


def _pair_counts(comparison: Comparison) -> list[tuple[int, int, list[str]]]:
    wtl = comparison.wins_ties_losses()
    n = len(comparison.systems)
    return [(i, j, [f"{int(wtl[0, m, i, j])}/{int(wtl[1, m, i, j])}/{int(wtl[2, m, i, j])}"
                    for m in range(len(comparison.measures))])
            for i in range(n) for j in range(i + 1, n)]


#: Characters that Markdown (GitHub's flavour included) reads as syntax inside a table cell: the
#: escape itself, the cell separator, emphasis, code, links, HTML, headings, strike-through, math
#: and entities. Each is written after a backslash, which any Markdown renders as the character.
_MARKDOWN_SPECIAL = frozenset("\\|*_`<>[]#~$&")
#: LaTeX's special characters in text mode, and those the default (OT1) font prints as others.
_LATEX_SPECIAL = {
    "\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_", "{": "\\{",
    "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}", "|": "\\textbar{}", "<": "\\textless{}",
    ">": "\\textgreater{}", "\n": "\\ensuremath{\\hookleftarrow}",
}


def _escape_md(text: str) -> str:
    """``text`` for a Markdown table cell, every character rendered as itself, in one pass: a
    newline (which would end the table's row) as ``<br>``, other control characters as numeric
    character references."""
    return "".join(
        "\\" + char if char in _MARKDOWN_SPECIAL
        else "<br>" if char == "\n"
        else f"&#{ord(char)};" if ord(char) < 32 or ord(char) == 127
        else char
        for char in text
    )


def _escape_latex(text: str) -> str:
    """``text`` for LaTeX's text mode, every character rendered as itself, in one pass (a second
    pass would escape the braces of the first one's ``\\textbackslash{}``): a newline as ↩, other
    control characters as their code point."""
    return "".join(
        _LATEX_SPECIAL.get(char) or (f"\\ensuremath{{\\langle}}U+{ord(char):04X}\\ensuremath{{\\rangle}}"
                                     if ord(char) < 32 or ord(char) == 127 else char)
        for char in text
    )


def to_latex(comparison: Comparison, *, digits: int = 4) -> str:
    """The comparison as a LaTeX ``table`` (booktabs rules), then a second one of wins/ties/losses.

    Example:
        >>> from torch_ndcg.stats import compare, to_latex
        >>> result = compare({"A": {"q1": 0.9, "q2": 0.8, "q3": 0.7}, "B": {"q1": 0.5, "q2": 0.6, "q3": 0.4}},
        ...                  alpha=0.1)
        >>> print(to_latex(result, digits=3).splitlines()[7])
        a & A & \\textbf{0.800}$^{b}$ \\\\
    """
    names = letters(comparison)
    columns = "cl" + "c" * len(comparison.measures)
    title = _escape_latex(caption(comparison)).replace("≤", "$\\le$")
    lines = [
        "\\begin{table}[ht]",
        "\\centering",
        f"\\caption{{{title}}}",
        f"\\begin{{tabular}}{{{columns}}}",
        "\\toprule",
        "\\# & System & " + " & ".join(_escape_latex(m) for m in comparison.measures) + " \\\\",
        "\\midrule",
    ]
    for s, row in enumerate(_cells(comparison, digits)):
        cells = []
        for value, wins, best in row:
            cell = f"\\textbf{{{value}}}" if best else value
            cells.append(cell + (f"$^{{{wins}}}$" if wins else ""))
        lines.append(f"{names[s]} & {_escape_latex(comparison.systems[s])} & " + " & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    lines += [
        "\\begin{table}[ht]",
        "\\centering",
        "\\caption{Queries won/tied/lost by the first system of each pair.}",
        f"\\begin{{tabular}}{{l{'c' * len(comparison.measures)}}}",
        "\\toprule",
        "Pair & " + " & ".join(_escape_latex(m) for m in comparison.measures) + " \\\\",
        "\\midrule",
    ]
    for i, j, counts in _pair_counts(comparison):
        lines.append(f"{names[i]} vs {names[j]} & " + " & ".join(counts) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def _number(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)  # JSON has no NaN or infinity


def _table(tensor: torch.Tensor) -> object:
    if tensor.dim() == 0:
        return _number(float(tensor))
    return [_table(part) for part in tensor]


def to_json(comparison: Comparison) -> str:
    """The whole comparison (per-query values, corrected and raw p-values, the tests' statistics,
    effect sizes, settings) as JSON text; :func:`from_json` reads it back unchanged. Non-finite
    numbers are written as ``"nan"``, ``"inf"``, ``"-inf"``.

    Example:
        >>> from torch_ndcg.stats import compare, from_json, to_json
        >>> result = compare({"A": {"q1": 0.9, "q2": 0.8, "q3": 0.7}, "B": {"q1": 0.5, "q2": 0.6, "q3": 0.4}})
        >>> back = from_json(to_json(result))
        >>> back.systems, bool((back.values == result.values).all())
        (['A', 'B'], True)
    """
    payload = {
        "format": _FORMAT,
        "version": _VERSION,
        "systems": comparison.systems,
        "measures": comparison.measures,
        "query_ids": comparison.query_ids,
        "test": comparison.test,
        "alpha": comparison.alpha,
        "correction": comparison.correction,
        "permutations": comparison.permutations,
        "seed": comparison.seed,
        "values": _table(comparison.values),
        "pvalues": _table(comparison.pvalues),
        "effect_sizes": _table(comparison.effect_sizes),
        "raw_pvalues": _table(comparison.raw_pvalues),
        "statistics": _table(comparison.statistics),
    }
    return json.dumps(payload, indent=1) + "\n"


def from_json(source: str | os.PathLike) -> Comparison:
    """A :class:`Comparison` from :func:`to_json`'s text (a ``str``), or from a file (a path such as
    ``pathlib.Path("report.json")``).

    The type decides, never the content: a ``str`` is always the JSON text itself, so a text that
    is not JSON is an error rather than a file name to open; read a file by passing an
    ``os.PathLike``. A leading byte-order mark is ignored. Everything is checked on reading: the
    names (distinct strings), the test, the correction, alpha, the shapes of the tables, finite
    per-query values and p-values in [0, 1]; anything else is a ``ValueError`` saying what is
    wrong. A report of the first format version, which kept only the corrected p-values, reads
    with NaN raw p-values and statistics.
    """
    if isinstance(source, os.PathLike):
        with open(source, encoding="utf-8-sig") as handle:
            text = handle.read()
    elif isinstance(source, str):
        text = source.removeprefix("\ufeff")
    else:
        raise TypeError(f"source must be JSON text (str) or a path (os.PathLike), got {type(source).__name__}")
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        hint = "" if text.lstrip().startswith("{") else "; to read a file, pass its path as pathlib.Path(...)"
        raise ValueError(f"not a JSON comparison: {error}{hint}") from None
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise ValueError(f"not a comparison written by torch_ndcg.stats.to_json (no \"format\": \"{_FORMAT}\")")
    version = payload.get("version")
    if version not in (1, _VERSION):
        raise ValueError(f"comparison format version {version!r}; this reader knows 1 to {_VERSION}")
    try:
        comparison = _comparison(payload, version)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"malformed comparison JSON: {error}") from None
    return comparison


def _comparison(payload: dict, version: int) -> Comparison:
    systems, measures, query_ids = (_names(payload, key) for key in ("systems", "measures", "query_ids"))
    m, s, q = len(measures), len(systems), len(query_ids)
    if s < 2:
        raise ValueError(f"a comparison has at least 2 systems, got {s}")
    test, correction = payload["test"], payload["correction"]
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; known: {tuple(TESTS)}")
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; known: {CORRECTIONS}")
    alpha, permutations, seed = payload["alpha"], payload["permutations"], payload["seed"]
    check_open_unit("alpha", alpha)
    check_count("permutations", permutations)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed must be an int or null, got {seed!r}")
    shapes = {"values": (m, s, q), "pvalues": (m, s, s), "effect_sizes": (m, s, s), "raw_pvalues": (m, s, s),
              "statistics": (m, s, s)}
    tables = {}
    for key, shape in shapes.items():
        if version == 1 and key in ("raw_pvalues", "statistics"):
            tables[key] = torch.full(shape, math.nan, dtype=torch.float64)
            continue
        tables[key] = torch.tensor(_numbers(payload[key]), dtype=torch.float64)
        if tables[key].shape != shape:
            raise ValueError(f"{key} has shape {tuple(tables[key].shape)}, not {shape} "
                             f"({m} measures, {s} systems, {q} queries)")
    per_query_values("values", tables["values"])
    pvalue_table(tables["pvalues"])
    pvalue_table(tables["raw_pvalues"])
    return Comparison(systems, measures, query_ids, tables["values"], test, float(alpha), correction, permutations,
                      seed, tables["pvalues"], tables["effect_sizes"], tables["raw_pvalues"], tables["statistics"])


def _names(payload: dict, key: str) -> list[str]:
    names = payload[key]
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"{key} must be a list of strings")
    if len(set(names)) != len(names):
        raise ValueError(f"{key} must be distinct, got {names}")
    return names


def _numbers(table: object) -> object:
    if isinstance(table, list):
        return [_numbers(item) for item in table]
    if isinstance(table, bool) or not isinstance(table, (int, float, str)):
        raise ValueError(f"expected a number, got {table!r}")
    return float(table)  # "nan", "inf" and "-inf" included
