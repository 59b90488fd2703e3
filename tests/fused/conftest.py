"""Run the kernel tests (``test_kernel_*.py``) natively on a GPU, else in Triton's interpreter.

``TRITON_INTERPRET=1`` only takes effect if it is set before Triton is first imported, and
other test modules import Triton indirectly (lightning imports torch._dynamo, which imports
it), so it cannot be switched on from inside a running test process. Without a GPU the kernel tests are
therefore deselected here and run by ``test_triton_interpreter.py`` in a fresh ``pytest``
process that starts with ``TRITON_INTERPRET=1``.
"""

from pathlib import Path

import pytest
from kernel_setup import KERNEL_TESTS, kernels_run_here


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if kernels_run_here():
        return
    deferred = [item for item in items if Path(str(item.path)) in KERNEL_TESTS]
    if deferred:
        config.hook.pytest_deselected(items=deferred)
        items[:] = [item for item in items if item not in deferred]
