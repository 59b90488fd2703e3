"""The optional compiled loops of NeuralNDCG's kernel path (torch_ndcg._sinkhorn_loops).

A plain C extension: no torch and no NumPy at build time. It is optional: where it cannot be
built (no compiler), the install still succeeds and the loss runs the same steps in NumPy;
``torch_ndcg.backends()["compiled_code"]`` says which. Built without floating-point
contraction, so its sums are the same on every machine; the AVX2 copy of its loops is chosen
when the module loads (portable flags, no ``-march=native``).
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "msvc":
            flags = ["/O2", "/fp:precise"]
        else:
            flags = ["-O3", "-ffp-contract=off", "-fno-fast-math", "-std=c11", "-g0"]
        for extension in self.extensions:
            extension.extra_compile_args = flags
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "torch_ndcg._sinkhorn_loops",
            sources=["torch_ndcg/_sinkhorn_loops.c"],
            depends=["torch_ndcg/_sinkhorn_loops_body.h"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
