"""Every name the package lists resolves, in a fresh interpreter, before any submodule is imported."""

import subprocess
import sys
import textwrap


def test_every_name_dir_lists_resolves_without_importing_it_first() -> None:
    script = textwrap.dedent(
        """
        import torch_ndcg as tn
        missing = []
        for name in dir(tn):
            try:
                getattr(tn, name)
            except AttributeError as error:
                missing.append(f"{name}: {error}")
        print(missing)
        """
    )
    fresh = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.strip() == "[]"


def test_the_lazy_modules_are_not_imported_with_the_package() -> None:
    script = "import sys, torch_ndcg; print(sorted(m for m in ('torch_ndcg.conventions', 'torch_ndcg.data', 'torch_ndcg.trec') if m in sys.modules))"
    fresh = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert fresh.stdout.strip() == "[]", fresh.stderr
