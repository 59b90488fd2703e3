"""Nothing is compiled or loaded at run time: in a fresh process with ``HOME`` unset, a read-only
home, no compiler on ``PATH`` or a cache folder full of planted libraries, every loss gives the
same values and gradients as here, and nothing is written to the home or cache folders."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]

PROGRAM = r"""
import json, torch, torch_ndcg as tn
torch.manual_seed(0)
s = torch.randn(4, 30, dtype=torch.float64)
r = torch.randint(0, 4, (4, 30))
m = torch.arange(30) < torch.tensor([[30], [12], [1], [25]])
out = {}
for name, loss, impls in (
    ("neural", tn.neural_ndcg_loss, ("auto", "kernel", "streaming")),
    ("approx", tn.approx_ndcg_loss, ("auto", "streaming")),
    ("lambda", tn.lambda_loss, ("auto", "streaming")),
):
    for impl in impls:
        x = s.clone().requires_grad_()
        value = loss(x, r, mask=m, impl=impl)
        value.backward()
        out[f"{name}-{impl}"] = [value.item(), x.grad.flatten().tolist()]
print(json.dumps(out))
"""


def _run(env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# On a GPU machine the CUDA driver keeps its own compute cache in the home folder (~/.nv), written
# when a process initialises CUDA; this package never asks for CUDA with CPU tensors, but the
# driver's files are not its to account for.
DRIVER_CACHE = ".nv"


def _files(folder: pathlib.Path) -> set[str]:
    found = {str(p.relative_to(folder)) for p in folder.rglob("*")}
    return {p for p in found if p.split(os.sep)[0] != DRIVER_CACHE}


def _base_env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TRITON_INTERPRET")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    return {**env, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture(scope="module")
def reference() -> dict:
    return _run({**_base_env(), "HOME": os.environ.get("HOME", "/")})


def _planted(folder: pathlib.Path) -> None:
    """A cache folder as an attacker or a crash would leave it: libraries at every name a
    runtime build might use, a truncated one and an empty one."""
    for sub in ("", "torch_ndcg", ".cache/torch_ndcg"):
        d = folder / sub
        d.mkdir(parents=True, exist_ok=True)
        (d / "scaling_chain.so").write_bytes(b"\x7fELF" + b"\0" * 12)  # truncated
        (d / "libtorch_ndcg.so").write_bytes(b"")
        (d / "native.so").write_bytes(b"not a library")


def _same(found: dict, expected: dict) -> None:
    assert found.keys() == expected.keys()
    for key in expected:
        torch.testing.assert_close(torch.tensor(found[key][0]), torch.tensor(expected[key][0]), rtol=0, atol=0)
        torch.testing.assert_close(torch.tensor(found[key][1]), torch.tensor(expected[key][1]), rtol=0, atol=0)


@pytest.mark.slow
def test_home_unset(reference):
    env = _base_env()  # no HOME, as for a uid without a passwd entry
    _same(_run(env), reference)


@pytest.mark.slow
def test_read_only_home(reference, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        _same(_run({**_base_env(), "HOME": str(home)}), reference)
        assert _files(home) == set()
    finally:
        home.chmod(stat.S_IRWXU)


@pytest.mark.slow
def test_no_compiler_on_path(reference, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**_base_env(), "HOME": str(tmp_path), "PATH": str(empty), "CC": "/nonexistent/cc"}
    before = _files(tmp_path)
    _same(_run(env), reference)
    assert _files(tmp_path) == before


@pytest.mark.slow
def test_hostile_cache_folders(reference, tmp_path):
    _planted(tmp_path)
    env = {**_base_env(), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / ".cache"),
           "TORCH_NDCG_CACHE": str(tmp_path), "CC": "true"}  # fmt: skip
    before = {p: (tmp_path / p).stat().st_mtime_ns for p in _files(tmp_path)}
    _same(_run(env), reference)
    assert {p: (tmp_path / p).stat().st_mtime_ns for p in _files(tmp_path)} == before


def test_the_only_compiled_code_is_the_module_built_at_install():
    package = ROOT / "torch_ndcg"
    assert sorted(p.name for p in package.rglob("*") if p.suffix in (".c", ".h")) == [
        "_sinkhorn_loops.c", "_sinkhorn_loops_body.h"]  # fmt: skip
    libraries = [p for p in package.rglob("*") if p.suffix in (".so", ".dll", ".dylib", ".pyd")]
    assert all(p.parent == package and p.name.startswith("_sinkhorn_loops.") for p in libraries)
    assert not [p for p in package.rglob("*.py") if "ctypes" in p.read_text()]
    from torch_ndcg.losses.relaxations.sinkhorn import loops as sinkhorn_loops

    if sinkhorn_loops._compiled is not None:  # imported as a module of the package, from its folder
        assert pathlib.Path(sinkhorn_loops._compiled.__file__).parent == package


@pytest.mark.slow
def test_an_install_without_a_compiler_succeeds_and_runs_numpy(reference, tmp_path):
    """``pip install`` where no C compiler works: the install succeeds without the compiled loops,
    the losses give the same values (to rounding: NumPy's sums run in another order), and
    ``backends()`` says why."""
    source, target = tmp_path / "source", tmp_path / "site"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    # The package's sources only: no build folder or library a build here left behind.
    shutil.copytree(ROOT / "torch_ndcg", source / "torch_ndcg", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    env = {**_base_env(), "HOME": str(tmp_path), "CC": "false", "PYTHONPATH": ""}
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
               "--target", str(target), str(source)]  # fmt: skip
    done = subprocess.run(install, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not [p for p in target.rglob("_sinkhorn_loops*") if p.suffix in (".so", ".pyd")]
    env = {**env, "PYTHONPATH": str(target)}
    # A developer's editable install hooks the package's modules wherever it is imported from;
    # this install's users have no such hook.
    alone = "import sys; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]\n"
    check = alone + "import torch_ndcg as tn; print(tn.__file__); print(tn.backends()['compiled_code'])"
    said = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env, capture_output=True, text=True)
    where, compiled_code = said.stdout.splitlines()
    assert where.startswith(str(target)), said.stderr[-2000:]
    assert compiled_code.startswith("none: torch_ndcg._sinkhorn_loops was not built")
    done = subprocess.run([sys.executable, "-c", alone + PROGRAM], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found.keys() == reference.keys()
    for key in reference:
        torch.testing.assert_close(torch.tensor(found[key][0]), torch.tensor(reference[key][0]), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(torch.tensor(found[key][1]), torch.tensor(reference[key][1]), rtol=1e-12, atol=1e-12)
