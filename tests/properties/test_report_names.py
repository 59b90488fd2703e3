"""System and measure names with Markdown's and LaTeX's special characters (``\\ _ % & $ # |``,
braces, newlines, control characters) survive every report writer.

Round trip, per format: JSON reads back the exact names; in Markdown and LaTeX, each table row
stays one line with one cell per column, and un-escaping a cell by the format's own rules (a
backslash escape, ``<br>`` and ``&#N;`` in Markdown; LaTeX's text-mode commands) gives the name
back, so distinct names stay distinct and no special character is left unescaped."""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_ndcg.stats import compare, from_json, to_json, to_latex, to_markdown

ALPHABET = list("ab\\_%&$#|\n{}~^<>*[]`!-. \t\r") + ["é", "≤"]
NAMES = st.text(alphabet=st.sampled_from(ALPHABET), min_size=1, max_size=8).filter(
    lambda name: name.strip(" \t") == name  # a renderer may trim a cell's outer spaces
)

# LaTeX's text-mode spellings of single characters, as any LaTeX reads them.
LATEX_COMMANDS = {
    "\\textbackslash{}": "\\", "\\&": "&", "\\%": "%", "\\$": "$", "\\#": "#", "\\_": "_", "\\{": "{", "\\}": "}",
    "\\textasciitilde{}": "~", "\\textasciicircum{}": "^", "\\textbar{}": "|", "\\textless{}": "<",
    "\\textgreater{}": ">", "\\ensuremath{\\hookleftarrow}": "\n",
}
LATEX_CODE_POINT = re.compile(r"\\ensuremath\{\\langle\}U\+([0-9A-F]{4})\\ensuremath\{\\rangle\}")
MARKDOWN_REFERENCE = re.compile(r"&#(\d+);")


def _markdown_cells(line: str) -> list[tuple[str, str]]:
    """A table row's cells as (un-escaped text, the syntax characters left bare in it): ``\\x``
    is x, ``<br>`` a newline, ``&#N;`` chr(N); an unescaped `` | `` separates cells."""
    assert line.startswith("| ") and line.endswith(" |"), line
    body = line[2:-2]
    cells, cell, bare, i = [], "", "", 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            cell, i = cell + body[i + 1], i + 2
        elif body.startswith("<br>", i):
            cell, i = cell + "\n", i + 4
        elif (reference := MARKDOWN_REFERENCE.match(body, i)) is not None:
            cell, i = cell + chr(int(reference.group(1))), reference.end()
        elif body.startswith(" | ", i):
            cells.append((cell, bare))
            cell, bare, i = "", "", i + 3
        else:
            bare += char if char in "|*_`<>[]#~$&\n\r" else ""
            cell, i = cell + char, i + 1
    return [*cells, (cell, bare)]


def _latex_cells(line: str) -> list[tuple[str, str]]:
    """A tabular row's cells as (text un-escaped by LaTeX's text-mode commands, the special
    characters left bare in it); `` & `` separates cells, `` \\\\`` ends the row."""
    assert line.endswith(" \\\\"), line
    body = line[:-3]
    cells, cell, bare, i = [], "", "", 0
    while i < len(body):
        if body.startswith(" & ", i):
            cells.append((cell, bare))
            cell, bare, i = "", "", i + 3
            continue
        if (code := LATEX_CODE_POINT.match(body, i)) is not None:
            cell, i = cell + chr(int(code.group(1), 16)), code.end()
            continue
        command = next((c for c in LATEX_COMMANDS if body.startswith(c, i)), None)
        if command is not None:
            cell, i = cell + LATEX_COMMANDS[command], i + len(command)
            continue
        bare += body[i] if body[i] in "&%$#_{}~^\\|<>\n\r" else ""
        cell, i = cell + body[i], i + 1
    return [*cells, (cell, bare)]


def _names(cells: list[tuple[str, str]]) -> list[str]:
    for text, bare in cells:
        assert not bare, f"{bare!r} left unescaped in the cell of {text!r}"
    return [text for text, _ in cells]


@settings(max_examples=80, deadline=None)
@given(systems=st.lists(NAMES, min_size=2, max_size=3, unique=True),
       measures=st.lists(NAMES, min_size=1, max_size=2, unique=True))
def test_names_round_trip_through_json_markdown_and_latex(systems, measures):
    values = torch.rand(len(measures), len(systems), 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    comparison = compare(values, systems=systems, measures=measures)

    back = from_json(to_json(comparison))
    assert back.systems == systems and back.measures == measures

    markdown = to_markdown(comparison).splitlines()
    assert len(markdown) == 2 + len(systems) + 3 + 2 + len(systems) * (len(systems) - 1) // 2
    assert _names(_markdown_cells(markdown[0])[2:]) == measures
    assert [_names(_markdown_cells(row)[1:2])[0] for row in markdown[2:2 + len(systems)]] == systems
    assert _names(_markdown_cells(markdown[2 + len(systems) + 3])[1:]) == measures

    latex = to_latex(comparison).splitlines()
    header = next(i for i, line in enumerate(latex) if line.startswith("\\# & System & "))
    assert _names(_latex_cells(latex[header])[2:]) == measures
    rows = latex[header + 2: header + 2 + len(systems)]
    assert [_names(_latex_cells(row)[1:2])[0] for row in rows] == systems
    pair_header = next(line for line in latex if line.startswith("Pair & "))
    assert _names(_latex_cells(pair_header)[1:]) == measures
