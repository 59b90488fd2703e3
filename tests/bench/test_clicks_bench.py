"""The click losses benchmark runs end to end at tiny sizes and prints one row per loss pair."""

from benchmarks import clicks


def test_clicks_benchmark_quick(capsys):
    medians = clicks.main(quick=True, argv=[])
    out = capsys.readouterr().out
    assert "4 lists x 8 items, float32, 1 thread" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "ms" not in line]
    assert [row.split("|")[1].strip() for row in rows] == list(clicks.PAIRS)
    assert all(label > 0 and ips > 0 for label, ips in medians.values())
