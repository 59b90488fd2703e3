"""The long-list benchmark runs end to end at tiny sizes and prints its table."""

import pytest

from benchmarks import long_lists


def test_long_lists_benchmark_quick(capsys):
    long_lists.main(quick=True, argv=[])
    out = capsys.readouterr().out
    assert "targets of the long-list losses" in out and "impl='auto' for approx_ndcg: sorted" in out
    rows = [line for line in out.splitlines() if line.startswith(tuple(long_lists.LOSSES))]
    assert [row[:17].strip() for row in rows] == list(long_lists.LOSSES)
    for row in rows:  # (ms, MiB) per shape, then the time ratio
        numbers = [float(cell) for cell in row[17:].split()]
        assert len(numbers) == 2 * len(long_lists.QUICK_SHAPES) + 1
        assert all(ms > 0 for ms in numbers[0:-1:2]) and numbers[-1] > 0


@pytest.mark.slow
def test_one_case_in_a_fresh_process():
    result = long_lists._fresh_process("NeuralSort@10", 1, 2_000, 1)
    assert result["ms"] > 0 and result["peak_mib"] >= 0
