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
    assert {"setup", "test", "api", "user-install"} <= markers
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


@pytest.mark.parametrize(("name", "code"), shell_cases(), ids=[name for name, _ in shell_cases()])
def test_shell_block_runs(name: str, code: str, scratch: Path) -> None:
    for command in shell_commands(code):
        for script, package in (("lightning_ranker", "lightning"), ("cross_encoder_reranker", "sentence_transformers"),
                                ("hf_trainer_ranker", "accelerate")):  # (transformers.Trainer needs accelerate)
            if script in command:
                pytest.importorskip(package, reason=f"the {script} example")
        result = run_shell(command, scratch)
        assert result.returncode == 0, f"{name}: {command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def test_the_main_commands_printed_output_is_current(scratch: Path) -> None:
    """The README's example output of the main command starts as the command's output starts."""
    text = ROOT.joinpath("README.md").read_text()
    shown = re.search(r"```bash\npython examples/train_ranker.py\n```\n\n```text\n(.*?)```", text, re.S)
    assert shown, "the README shows the main command's output right after the command"
    result = run_shell("python examples/train_ranker.py --set epochs=1 --set plot=false", scratch)
    assert result.returncode == 0, result.stderr
    # The data description, the random scorer and the untrained model are deterministic.
    expected = [line for line in shown[1].splitlines()[:7]]
    assert result.stdout.splitlines()[:7] == expected
