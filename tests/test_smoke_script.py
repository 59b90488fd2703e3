"""scripts/smoke.py, the run scripts/smoke_pythons.sh makes on the lowest and highest Python, passes here."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_smoke_run_passes_on_this_interpreter():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "smoke.py")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("smoke ok: Python ")
