"""The verification runtimes are the harness's clock, not the method's (issue 23).

The timing claims (PV against Monte Carlo and enumeration) read `runtime_s`, which `score` takes from the problem's
meter: the harness times the solve (bench.observe.observing, wrapped around every solve by bench/execute.py). A
method that understates its time is timed all the same; the decision metrics are computed from its bounds and
verdict against the enumerated truth, whatever it says of itself. (`iterations`, read by one ordering claim, is
still the method's report: no hook sees an algorithm's rounds; docs/metrics-audit.md.)
"""

import dataclasses
import time

import pytest

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.execute import execute
from bench.observe import observing
from bench.registry import Registry
from methods.verification import enumeration, pv
from tasks.verification import score
from tasks.verification.mini_acs_income import Config, build
from tests.tasks._claimed import OBSERVED, OUTPUT, REPORTED, claimed_metrics

DECISIONS = ("decided", "verdict", "correct_verdict", "contains_truth", "bound_width", "lower", "upper")


def _problem():
    return build(Config(variables=3), RunContext(0).for_task())


def test_a_method_understating_its_time_is_timed_by_the_harness():
    problem = _problem()
    started = time.perf_counter()
    with observing(problem):
        honest = enumeration.solve(problem, enumeration.Config(), RunContext(0))
        time.sleep(0.05)                                 # work the method leaves out of its own clock
    spent = time.perf_counter() - started
    lie = dataclasses.replace(honest, runtime_s=1e-9)
    observed = problem.meter.reading().seconds
    assert 0.05 <= observed <= spent
    assert score(problem, lie)["runtime_s"] == observed == score(problem, honest)["runtime_s"]
    assert honest.runtime_s < observed                   # the method's own clock ran inside the solve


def test_the_decision_metrics_come_from_the_bounds_and_the_truth_not_the_report():
    problem = _problem()
    with observing(problem):
        result = pv.solve(problem, pv.Config(max_iterations=40, precision=1e-3), RunContext(0))
    honest = score(problem, result)
    boasted = score(problem, dataclasses.replace(result, runtime_s=0.0, certain=True))
    assert {m: boasted[m] for m in DECISIONS if m in honest} == {m: honest[m] for m in DECISIONS if m in honest}
    assert honest["correct_verdict"] == 1.0 and honest["contains_truth"] == 1.0
    wrong = dataclasses.replace(result, verdict=not result.verdict)       # the verdict is judged against the truth
    assert score(problem, wrong)["correct_verdict"] == 0.0


def test_the_harness_times_the_solve():
    registry = Registry.discover(plugins=False)
    cell = make_cell(registry, Entry("enumeration"), Entry("mini_acs_income", {"variables": 3}), 0)
    record = execute(cell, registry)
    assert record.status == "done" and 0 < record.metrics["runtime_s"] <= record.wall_s


HOW = {"runtime_s": OBSERVED, "decided": OUTPUT, "verdict": OUTPUT, "correct_verdict": OUTPUT,
       "contains_truth": OUTPUT, "iterations": REPORTED}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics("verification") <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.xfail(strict=True, reason="iterations is the method's count of its own branch-and-bound rounds "
                                       "(docs/metrics-audit.md, open item)")
def test_a_method_understating_its_iterations_is_not_believed():
    problem = _problem()
    with observing(problem):
        result = pv.solve(problem, pv.Config(max_iterations=40, precision=1e-3), RunContext(0))
    assert result.iterations > 1
    understated = dataclasses.replace(result, iterations=1)
    assert score(problem, understated)["iterations"] == score(problem, result)["iterations"]
