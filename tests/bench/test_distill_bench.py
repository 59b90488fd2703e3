"""The distillation losses benchmark runs at tiny sizes without sentence-transformers (a maintainer
runs it with it; the parity itself is tested on committed reference values)."""

import builtins

from benchmarks import distill


def test_without_sentence_transformers_prints_our_column(capsys, monkeypatch):
    real_import = builtins.__import__

    def no_sentence_transformers(name, *args, **kwargs):
        if name.startswith("sentence_transformers"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sentence_transformers)
    distill.main(quick=True, argv=[])
    out = capsys.readouterr().out
    assert "4 lists x 8 items, float32, 1 thread" in out and "not installed" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "ms" not in line and "loss" not in line]
    assert [row.split("|")[1].strip() for row in rows] == list(distill.OURS)
    assert all(float(row.split("|")[2]) > 0 for row in rows)

