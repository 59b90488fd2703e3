"""Nothing is compiled or loaded at run time: in a fresh process with ``HOME`` unset, a read-only
home, no compiler on ``PATH`` or a cache folder full of planted libraries, every loss gives the
same values and gradients as here, and nothing is written to the home or cache folders."""

from __future__ import annotations

import json
import os
import pathlib
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


def _files(folder: pathlib.Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


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


def test_home_unset(reference):
    env = _base_env()  # no HOME, as for a uid without a passwd entry
    _same(_run(env), reference)


def test_read_only_home(reference, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        _same(_run({**_base_env(), "HOME": str(home)}), reference)
        assert _files(home) == set()
    finally:
        home.chmod(stat.S_IRWXU)


def test_no_compiler_on_path(reference, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**_base_env(), "HOME": str(tmp_path), "PATH": str(empty), "CC": "/nonexistent/cc"}
    before = _files(tmp_path)
    _same(_run(env), reference)
    assert _files(tmp_path) == before


def test_hostile_cache_folders(reference, tmp_path):
    _planted(tmp_path)
    env = {**_base_env(), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / ".cache"),
           "TORCH_NDCG_CACHE": str(tmp_path), "CC": "true"}  # fmt: skip
    before = {p: (tmp_path / p).stat().st_mtime_ns for p in _files(tmp_path)}
    _same(_run(env), reference)
    assert {p: (tmp_path / p).stat().st_mtime_ns for p in _files(tmp_path)} == before


def test_the_package_ships_no_c_source_and_loads_no_library():
    package = ROOT / "torch_ndcg"
    assert not [p for p in package.rglob("*") if p.suffix in (".c", ".so", ".dll", ".dylib")]
    assert not [p for p in package.rglob("*.py") if "ctypes" in p.read_text()]
