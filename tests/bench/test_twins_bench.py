"""The twins benchmark runs end to end at tiny sizes and prints both tables, one row per twin."""

from benchmarks import twins


def test_twins_benchmark_quick(capsys):
    twins.main(quick=True, argv=["--repeats", "1"])
    out = capsys.readouterr().out
    headers = ("| metric |", "| loss |")
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith(headers)]
    short = [row.split("|")[1].strip() for row in rows if "loss" not in row]
    assert short == twins.TWINS
    for row in rows:
        numbers = [float(cell) for cell in row.strip("| ").split("|")[1:]]
        assert numbers and all(n > 0 for n in numbers)
    assert "neuralsort_ndcg_loss" in out and "mrr_loss (neuralsort)" in out
