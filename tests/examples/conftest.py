"""Make the example scripts importable, so their ``main(argv)`` runs in-process (no interpreter start-up)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
