"""Every kernel variant compiles for an H100 (sm_90) here, without a GPU.

The CPU interpreter runs kernels as NumPy and accepts code that the real compiler refuses
(non-constexpr globals, say), so this compiles each variant the launchers use, through
Triton's own front end, LLVM and its bundled ptxas, to a cubin.
"""

import os

import pytest

triton = pytest.importorskip("triton")
pytestmark = pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") == "1", reason="kernels are interpreted in this process"
)

from triton.compiler import ASTSource  # noqa: E402

from torch_ndcg.fused import approx, sinkhorn  # noqa: E402

VARIANTS = [
    (sinkhorn._lse_outer, {"HAS_H": True}, "fp32"),
    (sinkhorn._lse_outer, {"HAS_H": False}, "fp64"),
    (sinkhorn._lse_outer_grad_rows, {"HAS_H": True}, "fp32"),
    (sinkhorn._lse_outer_grad_rows, {"HAS_H": False}, "fp32"),
    (sinkhorn._lse_outer_grad_cols, {"HAS_H": True}, "fp32"),
    (sinkhorn._lse_outer_grad_cols, {"HAS_H": False}, "fp64"),
    (sinkhorn._abs_diff_sum, {"BACKWARD": True}, "fp32"),
    (sinkhorn._abs_diff_sum, {"BACKWARD": False}, "fp32"),
    (approx._ranks_forward, {}, "bf16"),
    (approx._ranks_backward, {}, "fp16"),
]


@pytest.mark.parametrize(("kernel", "flags", "dtype"), VARIANTS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_compiles_for_sm90(kernel, flags, dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # the launch default, stated (else Triton 3.9 warns)
    try:
        from triton.backends.compiler import GPUTarget

        target = GPUTarget("cuda", 90, 32)
    except ImportError:  # pragma: no cover - a Triton without the NVIDIA backend
        pytest.skip("this Triton has no NVIDIA backend")
    constexprs = {"BLOCK_I": 64, "BLOCK_J": 64, **flags}
    names = kernel.arg_names
    signature = {
        name: "constexpr" if name in constexprs
        # The scores pointer (first) may be half precision; outputs are float32/float64.
        else (f"*{dtype}" if i == 0 else f"*{'fp64' if dtype == 'fp64' else 'fp32'}") if name.endswith("ptr")
        else "i32" if name.startswith("n") else "fp32"
        for i, name in enumerate(names)
    }  # fmt: skip
    source = ASTSource(
        fn=kernel, signature=signature, constexprs={(names.index(k),): v for k, v in constexprs.items()}
    )
    compiled = triton.compile(source, target=target)
    assert compiled.asm["cubin"]
