"""The calibration of impl="auto"'s cost model runs at tiny sizes and prints pasteable constants."""

import torch

from torch_ndcg.bench import calibrate
from torch_ndcg.losses.cost_model import Cost


def test_calibrate_quick_prints_a_cost_per_impl_and_thread_count(capsys):
    calibrate.main(quick=True, argv=[])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith('("cpu"')]
    assert len(lines) == 2 * len({1, torch.get_num_threads()})
    for line in lines:
        key, cost = line.rstrip(",").split(": ", 1)
        assert isinstance(eval(cost, {"Cost": Cost}), Cost)


def test_fit_recovers_known_coefficients():
    truth = Cost(per_call=2e-4, per_element=3e-9)
    rows = [(calls, elements, truth.per_call * calls + truth.per_element * elements)
            for calls, elements in ((1, 1e3), (4, 1e5), (2, 1e6), (8, 4e6))]  # fmt: skip
    fitted = calibrate.fit(rows)
    assert abs(fitted.per_call / truth.per_call - 1) < 1e-6 and abs(fitted.per_element / truth.per_element - 1) < 1e-6
