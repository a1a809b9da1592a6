"""The verification runtimes are the harness's clock, and the branch-and-bound work the problem's count (issue 23).

The timing claims (PV against Monte Carlo and enumeration) read `runtime_s`, which `score` takes from the problem's
meter: the harness times the solve (bench.observe.observing, wrapped around every solve by bench/execute.py). A
method that understates its time is timed all the same; the decision metrics are computed from its bounds and
verdict against the enumerated truth, whatever it says of itself. The work is observed the same way: the problem's
population counts every call of its exact box mass (`mass_calls`) and the boxes it was given (`mass_boxes`) into the
meter, for every registered method bit for bit what it evaluated during its solve, nothing before or after.
`iterations` is still the method's report, which no claim reads: a round is the algorithm's own unit and no count
equals it (on the heuristics claim's cells `mass_calls` is 4 + 2 · iterations: two probabilities, each a joint and a
given bound, the given ones decided at their root box), so the heuristics claim
(heuristics-prob-mass-smart-branching-beat-random) reads the observed `mass_boxes`; docs/metrics-audit.md.
"""

import dataclasses
import pickle
import time
import weakref

import pytest

from bench.cells import Entry, make_cell
from bench.configs import build_config
from bench.context import RunContext
from bench.execute import execute
from bench.observe import observing
from bench.registry import Registry
from methods.verification import enumeration, pv
from tasks.verification import VerificationProblem, score
from tasks.verification._population import Population
from tasks.verification.fairsquare import Config as FairSquare
from tasks.verification.fairsquare import build as fairsquare
from tasks.verification.mini_acs_income import Config, build
from tests.tasks._claimed import OBSERVED, OUTPUT, REGISTRY, REPORTED, assert_unmoved, claimed_metrics, pairs

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


class Spy:
    """Counts the calls of Population.probability and Population.point_masses (the enumeration's table form) and
    the masses they return beside the meter, from the class itself."""

    def __init__(self, monkeypatch):
        self.calls, self.boxes = 0, 0
        for name in ("probability", "point_masses"):
            monkeypatch.setattr(Population, name, self._spying(getattr(Population, name)))

    def _spying(self, counted):
        def spy(population, *args):
            masses = counted(population, *args)
            self.calls, self.boxes = self.calls + 1, self.boxes + len(masses)
            return masses
        return spy


@pytest.mark.parametrize("method,task", pairs("verification"))
def test_every_method_is_charged_the_masses_it_evaluated_during_its_solve(method, task, monkeypatch):
    m, t = REGISTRY.method(method), REGISTRY.task(task)
    ctx = RunContext(seed=0)
    problem = t.build(build_config(t.Config, dict(t.spec.smallest), task), ctx.for_task())
    config = build_config(m.Config, dict(m.spec.smoke), method)
    if m.skip(problem, config):
        pytest.skip(f"{method} skips {task} at its smallest settings")
    spy = Spy(monkeypatch)                               # from here: the task's build (its enumeration) is over
    with observing(problem):
        result = m.solve(problem, config, ctx)
    problem.population.probability(problem.population.space.lb, problem.population.space.ub)   # after the solve
    scores = score(problem, result)
    assert (scores["mass_calls"], scores["mass_boxes"]) == (spy.calls - 1, spy.boxes - 1)
    assert (scores["mass_calls"] > 0) == (method != "monte_carlo")      # Monte Carlo draws samples, no box masses


def test_pv_evaluates_one_mass_per_open_bound_per_round():
    # fairsquare: P(hi | female) and P(hi | male), each a joint bound and a given bound; the given bounds (sex, an
    # input bound) are decided on their root box, so after the four roots only the two joint bounds split each round
    problem = fairsquare(FairSquare(), RunContext(0).for_task())
    with observing(problem):
        result = pv.solve(problem, pv.Config(max_iterations=5, batch_size=32), RunContext(0))
    scores = score(problem, result)
    assert result.iterations == 5 and scores["mass_calls"] == 4 + 2 * 5 == 14 and scores["mass_boxes"] == 112


def test_enumeration_is_charged_every_input_it_visits():
    problem = _problem()
    assert problem.population.support_size() == 2 * 8 * 24 == 384
    for chunk, calls in ((1 << 16, 1), (100, 4)):       # one mass call per chunk of inputs
        with observing(problem):
            result = enumeration.solve(problem, enumeration.Config(chunk=chunk), RunContext(0))
        scores = score(problem, result)
        assert (scores["mass_calls"], scores["mass_boxes"]) == (calls, 384)


def test_a_method_understating_its_iterations_leaves_the_observed_work_where_it_was():
    problem = _problem()
    with observing(problem):
        result = pv.solve(problem, pv.Config(max_iterations=40, precision=1e-3), RunContext(0))
    honest, understated = score(problem, result), score(problem, dataclasses.replace(result, iterations=1))
    assert honest["mass_calls"] > 1 and honest["mass_boxes"] > 1
    assert {m: understated[m] for m in ("mass_calls", "mass_boxes")} == \
        {m: honest[m] for m in ("mass_calls", "mass_boxes")}


def test_a_population_shared_by_two_problems_counts_into_each_live_one():
    first = _problem()
    second = VerificationProblem("a second problem", first.network, first.population, first.target, first.spec,
                                 first.exact)
    first.population.probability(first.population.space.lb, first.population.space.ub)
    assert first.meter.reading()["mass_calls"] == second.meter.reading()["mass_calls"] == 1
    dropped, population, meter = weakref.ref(first.meter), second.population, second.meter
    del first, second
    population.probability(population.space.lb, population.space.ub)
    assert dropped() is None and meter.reading()["mass_boxes"] == 2      # a problem's meter dies with it


def test_an_unpickled_problem_counts_into_its_own_meter():
    problem = pickle.loads(pickle.dumps(_problem()))
    problem.population.probability(problem.population.space.lb, problem.population.space.ub)
    assert (problem.meter.reading()["mass_calls"], problem.meter.reading()["mass_boxes"]) == (1, 1)


def test_the_harness_counts_the_masses_of_the_solve():
    cell = make_cell(REGISTRY, Entry("pv", {"max_iterations": 5, "batch_size": 32}), Entry("fairsquare"), 0)
    record = execute(cell, REGISTRY)
    assert record.status == "done" and (record.metrics["mass_calls"], record.metrics["mass_boxes"]) == (14, 112)


HOW = {"runtime_s": OBSERVED, "decided": OUTPUT, "verdict": OUTPUT, "correct_verdict": OUTPUT,
       "contains_truth": OUTPUT, "iterations": REPORTED, "mass_calls": OBSERVED, "mass_boxes": OBSERVED}


def test_every_claimed_metric_is_audited():
    assert claimed_metrics("verification") <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


def test_a_method_understating_its_iterations_moves_no_claimed_metric():
    # iterations stays the method's report, but no claim reads it: the heuristics claim reads mass_boxes
    assert "iterations" not in claimed_metrics("verification")
    assert_unmoved("verification", "pv", "fairsquare", {"iterations": lambda _: 1})
