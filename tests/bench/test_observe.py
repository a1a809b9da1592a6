"""bench.observe: the harness's meter of a solve (issue 23: the scorer measures, the method reports nothing)."""

import dataclasses
import gc
import time

import numpy as np
import pytest
import torch

from bench.observe import Meter, Misreport, check_declared, check_report, count_forwards, meter_of, observing


class _Problem:
    def __init__(self):
        self.meter = Meter()


def test_observing_resets_before_and_freezes_after_the_solve():
    problem = _Problem()
    problem.meter.count("calls", 5)                      # the task's own work while building
    with observing(problem) as meter:
        assert meter is problem.meter and meter.reading().counts == {}
        meter.count("calls", 2)
        time.sleep(0.01)
    problem.meter.count("calls", 100)                    # after the solve: the scorer, anyone
    reading = problem.meter.reading()
    assert reading.delimited and reading["calls"] == 2 and reading["other"] == 0 and reading.seconds >= 0.01


def test_a_live_reading_outside_the_harness_and_no_meter_is_no_op():
    problem = _Problem()
    problem.meter.count("calls")
    assert not problem.meter.reading().delimited and problem.meter.reading()["calls"] == 1
    with observing(object()) as meter:                   # a family without a meter: nothing to do
        assert meter is None and meter_of(object()) is None


def test_the_meter_freezes_even_when_the_solve_raises():
    problem = _Problem()
    with pytest.raises(RuntimeError), observing(problem):
        problem.meter.count("calls")
        raise RuntimeError("boom")
    assert problem.meter.reading().delimited and problem.meter.reading()["calls"] == 1


def test_count_forwards_counts_calls_and_rows_and_lets_the_meter_go():
    model = torch.nn.Linear(3, 2)
    meter = Meter()
    count_forwards(model, meter, "net")
    model(torch.zeros(4, 3))
    model(input=torch.zeros(1, 3))
    assert (meter.reading()["net"], meter.reading()["net_rows"]) == (2, 5)
    del meter
    gc.collect()
    assert not model._forward_pre_hooks                  # the hook went with its meter


def test_check_report():
    check_report("calls", 3, 3)
    with pytest.raises(Misreport, match="reports 2 calls; the harness observed 3"):
        check_report("calls", 2, 3)


def test_check_declared_compares_a_results_declaration_with_the_cells_config():
    @dataclasses.dataclass(frozen=True)
    class Config:
        c: float = 1.5
        weights: tuple = (1.0, 2.0)
        beta: float = float("nan")

    class Result:
        def __init__(self, **declared):
            self.declared = declared

    check_declared(Result(c=1.5, weights=np.array([1.0, 2.0]), beta=float("nan")), Config())
    check_declared(object(), Config())                   # nothing declared: nothing to check
    with pytest.raises(Misreport, match="declares c=3.0; the cell's config has c=1.5"):
        check_declared(Result(c=3.0), Config())
    with pytest.raises(Misreport, match="declares weights"):
        check_declared(Result(weights=[1.0, 2.0, 3.0]), Config())
    with pytest.raises(Misreport, match="declares weights"):
        check_declared(Result(weights=1.0), Config())
    with pytest.raises(Misreport, match="config has no field 'lam'"):
        check_declared(Result(lam=0.1), Config())
