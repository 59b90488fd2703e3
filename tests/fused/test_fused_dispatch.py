"""Triton is optional: importing torch_ndcg never needs it, and impl="triton" fails clearly."""

import subprocess
import sys
import textwrap

import pytest
import torch

from torch_ndcg import fused as tt


def test_import_and_cpu_paths_without_triton() -> None:
    # sys.modules[name] = None makes every `import triton` raise ImportError, as if uninstalled.
    code = textwrap.dedent(
        """
        import sys
        sys.modules["triton"] = None
        import torch, torch_ndcg as tn
        from torch_ndcg import fused as tt
        assert "triton" not in {m.split(".")[0] for m in sys.modules if sys.modules[m] is not None}
        assert float(tn.ndcg(torch.tensor([3.0, 2.0, 1.0]), torch.tensor([1, 0, 1]))) > 0
        assert not tt.importable() and not tt.available(torch.zeros(1))
        try:
            tt.require(torch.zeros(1))
        except ImportError as error:
            assert "pip install triton" in str(error)
        else:
            raise AssertionError("no ImportError")
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_cpu_tensor_without_interpreter_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("triton")  # without Triton the ImportError below comes first
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert not tt.available(torch.zeros(3))
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        tt.kernels_for(torch.zeros(1, 3))


def test_missing_triton_is_an_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "triton", None)
    assert not tt.available(torch.zeros(3))
    with pytest.raises(ImportError, match="pip install triton"):
        tt.kernels_for(torch.zeros(1, 3))
