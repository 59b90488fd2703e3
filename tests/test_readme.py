"""Every code block of the README and of the guides runs as written.

Python blocks run in this process, each in a fresh namespace. Shell blocks run line by line from a
scratch folder that holds the repository's examples and configs, plus small stand-in files for the
real data sets the guides name (same layouts, a few dozen queries), so a command that reads
``MSLR-WEB10K/Fold1`` runs as written. Blocks after a ``<!-- ci:NAME -->`` marker (set-up, tests,
install, API reference) are what ``.ci/run`` runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", ROOT / "examples" / "README.md"]
FENCE = re.compile(r"(?:<!-- ci:(?P<marker>[\w-]+) -->\n)?```(?P<lang>\w*)\n(?P<code>.*?)```", re.S)


def blocks(path: Path, lang: str) -> list[tuple[str | None, str]]:
    """``(ci marker or None, code)`` of every ``lang`` fenced block of ``path``, in order."""
    return [(m["marker"], m["code"]) for m in FENCE.finditer(path.read_text()) if m["lang"] == lang]


def shell_commands(code: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments and blank lines dropped."""
    joined = code.replace("\\\n", " ")
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def python_cases() -> list[tuple[str, str]]:
    return [(f"{path.relative_to(ROOT)}:{i}", code) for path in DOCUMENTS for i, (_, code) in enumerate(blocks(path, "python"))]


def shell_cases() -> list[tuple[str, str]]:
    return [(f"{path.relative_to(ROOT)}:{i}", code) for path in DOCUMENTS
            for i, (marker, code) in enumerate(blocks(path, "bash")) if marker is None]


def test_the_documents_have_the_blocks_ci_reads() -> None:
    markers = {marker for marker, _ in blocks(ROOT / "README.md", "bash")}
    assert {"setup", "test", "slow", "api", "user-install"} <= markers
    assert len(python_cases()) >= 4 and len(shell_cases()) >= 5


@pytest.mark.parametrize(("name", "code"), python_cases(), ids=[name for name, _ in python_cases()])
def test_python_block_runs(name: str, code: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    if "tn.metrics" in code:
        pytest.importorskip("torchmetrics", reason="the block uses the metric classes")
    monkeypatch.chdir(ROOT)
    threads = torch.get_num_threads()
    try:
        exec(compile(code, name, "exec"), {"__name__": "__readme__"})
    finally:
        torch.set_num_threads(threads)  # a block may change it; later tests keep theirs
    assert capsys.readouterr().out.strip(), f"{name} printed nothing"


def write_letor(path: Path, dataset, *, qids: bool = True) -> list[int]:
    """``dataset``'s queries as SVMlight lines (``label qid:Q 1:x …``); the query sizes, in order."""
    lines, sizes = [], []
    for q in range(len(dataset)):
        features, relevance = dataset[q]
        sizes.append(len(relevance))
        for x, y in zip(features.tolist(), relevance.tolist()):
            lines.append(f"{int(y)} " + (f"qid:{q} " if qids else "") + " ".join(f"{i + 1}:{v:.4f}" for i, v in enumerate(x)))
    path.write_text("\n".join(lines) + "\n")
    return sizes


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder to run the shell blocks from: the examples and configs, and stand-in data sets."""
    from torch_ndcg.data import synthetic_letor

    folder = tmp_path_factory.mktemp("readme")
    for name in ("examples", "configs", "tests"):
        (folder / name).symlink_to(ROOT / name)
    splits = synthetic_letor((24, 8, 8), num_features=10, list_length=(5, 20), seed=1)
    for fold in ("MSLR-WEB10K/Fold1", "MSLR-WEB10K/Fold2"):
        (folder / fold).mkdir(parents=True)
        for split in ("train", "vali", "test"):
            write_letor(folder / fold / f"{split}.txt", splits[split])
    lambdarank = folder / "LightGBM" / "examples" / "lambdarank"
    lambdarank.mkdir(parents=True)
    for split in ("train", "test"):  # LightGBM's layout: no validation file, sizes beside the data
        sizes = write_letor(lambdarank / f"rank.{split}", splits[split], qids=False)
        (lambdarank / f"rank.{split}.query").write_text("".join(f"{n}\n" for n in sizes))
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    python = bin_dir / "python"  # `python` in a block is this interpreter, in its environment
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return folder


def run_shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{cwd / '.bin'}{os.pathsep}{os.environ['PATH']}", MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), shell_cases(), ids=[name for name, _ in shell_cases()])
def test_shell_block_runs(name: str, code: str, scratch: Path) -> None:
    for command in shell_commands(code):
        for script, package in (("lightning_ranker", "lightning"), ("cross_encoder_reranker", "sentence_transformers"),
                                ("hf_trainer_ranker", "accelerate")):  # (transformers.Trainer needs accelerate)
            if script in command:
                pytest.importorskip(package, reason=f"the {script} example")
        result = run_shell(command, scratch)
        assert result.returncode == 0, f"{name}: {command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


OUTPUT = re.compile(
    r"```(?P<lang>bash|python)\n(?P<code>(?:(?!```).)*)```\n\n<!-- output: (?P<kind>full|excerpt) -->\n```text\n(?P<shown>.*?)```",
    re.S,
)


def output_cases() -> list[tuple[str, str, str, str, str]]:
    """``(name, lang, code, kind, shown)`` of every printed output a document shows: a ``text``
    block right after the code block that prints it, marked ``full`` or ``excerpt``."""
    return [(f"{path.relative_to(ROOT)}:output{i}", m["lang"], m["code"], m["kind"], m["shown"])
            for path in DOCUMENTS for i, m in enumerate(OUTPUT.finditer(path.read_text()))]  # fmt: skip


def test_every_shown_output_says_how_it_is_compared() -> None:
    for path in DOCUMENTS:
        text = path.read_text()
        assert text.count("```text\n") == len(OUTPUT.findall(text)), (
            f"{path.name}: a text block must follow its command and be marked <!-- output: full --> or excerpt"
        )


def matches_excerpt(shown: str, printed: str) -> bool:
    """The shown lines appear in the printed output in order; a ``...`` line stands for any lines."""
    lines, at = printed.splitlines(), 0
    for line in shown.splitlines():
        if line.strip() == "...":
            continue
        try:
            at = lines.index(line, at) + 1
        except ValueError:
            return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize(("name", "lang", "code", "kind", "shown"), output_cases(), ids=[c[0] for c in output_cases()])
def test_every_shown_output_is_what_the_command_prints(name, lang, code, kind, shown, scratch, capsys) -> None:
    if lang == "bash":
        *first, last = shell_commands(code)
        assert not first, f"{name}: one command per block whose output is shown"
        result = run_shell(last, scratch)
        assert result.returncode == 0, result.stderr[-3000:]
        printed = result.stdout
    else:
        exec(compile(code, name, "exec"), {"__name__": "__readme__"})
        printed = capsys.readouterr().out
    if kind == "full":
        assert printed == shown, f"{name}: the block shows other output than the command prints:\n{printed}"
    else:
        assert matches_excerpt(shown, printed), f"{name}: a shown line is not in the output, in order:\n{printed}"


def test_excerpts_keep_their_order_and_gaps() -> None:
    printed = "a\nb 1.0\nc\nd\n"
    assert matches_excerpt("a\n...\nd\n", printed) and matches_excerpt("b 1.0\nc\n", printed)
    assert not matches_excerpt("c\nb 1.0\n", printed) and not matches_excerpt("b 1.1\n", printed)


NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+")


@pytest.mark.parametrize(("name", "code"), python_cases(), ids=[name for name, _ in python_cases()])
def test_values_in_print_comments_are_what_the_line_prints(name: str, code: str, monkeypatch) -> None:
    """``print(...)  # mean NDCG@3: 0.8849``: each number in the comment is in what that line prints."""
    if "tn.metrics" in code:
        pytest.importorskip("torchmetrics", reason="the block uses the metric classes")
    monkeypatch.chdir(ROOT)
    printed: dict[int, str] = {}

    def recording_print(*values, **options) -> None:
        printed[sys._getframe(1).f_lineno] = printed.get(sys._getframe(1).f_lineno, "") + " ".join(map(str, values))

    threads = torch.get_num_threads()
    try:
        exec(compile(code, name, "exec"), {"__name__": "__readme__", "print": recording_print})
    finally:
        torch.set_num_threads(threads)
    for number, line in enumerate(code.splitlines(), 1):
        if "print(" in line and "  # " in line:
            for value in NUMBER.findall(line.split("  # ", 1)[1]):
                assert value in printed.get(number, ""), f"{name} line {number}: {value} not in {printed.get(number)!r}"
