"""The verdict lock: written from judged verdicts, read back exactly, shown as the reference run on an empty store,
and a stored verdict that differs from it flagged."""

from dataclasses import replace

import pytest

from bench.cells import Entry, make_cell
from bench.errors import BenchError
from bench.spec import RunRecord
from leaderboard.claims import evaluate_paper, load_paper, paper_overview
from leaderboard.lock import disagreements, make_lock, read_lock, with_reference, write_lock

CLAIMS = """
paper: toy-paper
title: A toy paper
methods:
  toy_noisy: {fidelity: reconstructed, deviations: none}
defaults: {seeds: 2, scale: cpu-reduced, kind: ordering, metric: error}
claims:
  - id: beats
    cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}, {method: toy_noisy, task: toy_target}]
    expect: {order: increasing}
    control: {why: equal noise, cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}, {method: toy_noisy, task: toy_target, method_config: {noise: 0.02}}]}
  - id: at-paper-scale
    scale: paper-scale
    cells: [{method: toy_noisy, task: toy_target, task_config: {dim: 9}}, {method: toy_noisy, task: toy_target}]
    expect: {order: increasing}
checks:
  - {id: bounded, why: the code clips it, kind: bound, cells: {method: toy_noisy, task: toy_target}, expect: {max: 10}}
"""  # noqa: E501

# noise -> (error, wall, cpu) for seeds 0 and 1; the control (0.01 -> 0.02) is as flat as it must be
RUNS = {0.01: ([0.5, 0.7], 1.0, 2.0), 0.1: ([2.0, 2.2], 3.0, 5.0), 0.02: ([0.7, 0.5], 1.5, 1.0)}


@pytest.fixture
def paper_and_registry(tmp_path, toy_registry):
    (tmp_path / "toy-paper.yaml").write_text(CLAIMS)
    registry = replace(toy_registry, papers_dir=tmp_path, _loaded=toy_registry._loaded)
    return load_paper(registry, "toy-paper"), registry


def _fill(store, registry, runs=RUNS):
    for noise, (errors, wall, cpu) in runs.items():
        for seed, error in enumerate(errors):
            cell = make_cell(registry, Entry("toy_noisy", {"noise": noise}), Entry("toy_target"), seed)
            store.save(RunRecord(cell, "done", 2, {"error": error}, {}, wall_s=wall, cpu_s=cpu),
                       runner="local")  # toy_target v2


def test_a_lock_records_verdicts_controls_seeds_and_costs_and_reads_back(tmp_path, paper_and_registry, store):
    paper, registry = paper_and_registry
    _fill(store, registry)
    verdicts = evaluate_paper(paper, store, registry)
    lock = make_lock(paper, verdicts, store, registry, ("cpu-full", "cpu-reduced"))
    assert set(lock.claims) == {"beats", "bounded"}  # the paper-scale claim is not locked at CPU scale
    beats = lock.claims["beats"]
    assert (beats.verdict, beats.control, beats.seeds) == ("reproduced", "fails", 2)
    assert beats.ours == [pytest.approx(0.6), pytest.approx(2.1)]
    # its cells and its control's, each once: 0.01 (2 runs), 0.1 (2), 0.02 (2)
    assert beats.wall_s == pytest.approx(2 * (1.0 + 3.0 + 1.5)) and beats.cpu_s == pytest.approx(2 * (2.0 + 5.0 + 1.0))
    assert lock.claims["bounded"].cpu_s == pytest.approx(10.0)  # noise 0.1 only
    assert lock.cpu_s == pytest.approx(16.0)  # the paper's runs, each counted once
    path = write_lock(lock, tmp_path / "verdicts")
    assert read_lock("toy-paper", tmp_path / "verdicts") == lock
    assert "A changed verdict is a reviewed diff" in path.read_text()
    assert disagreements(verdicts, lock) == {}


def test_an_empty_store_shows_the_reference_run_and_a_differing_store_is_flagged(tmp_path, paper_and_registry, store):
    paper, registry = paper_and_registry
    _fill(store, registry)
    lock = make_lock(paper, evaluate_paper(paper, store, registry), store, registry, ("cpu-reduced",))
    empty = type(store).open(f"sqlite:///{tmp_path}/empty.db")
    shown, source = with_reference(evaluate_paper(paper, empty, registry), lock)
    assert source == "reference"
    by_id = {v.claim.id: v for v in shown}
    assert by_id["beats"].verdict == "reproduced" and by_id["beats"].source == "reference"
    assert by_id["beats"].detail.startswith(f"reference run ({lock.date}, {lock.commit[:10]}): negative control fails")
    assert by_id["at-paper-scale"].verdict == "not run" and by_id["at-paper-scale"].source == "store"
    assert "fragile" not in by_id["beats"].detail
    # a claim marked fragile after its lock was written: the reference run says so
    fragile = replace(paper, claims=[replace(c, fragile="flipped under AVX512") if c.id == "beats" else c
                                     for c in paper.claims])
    shown, _ = with_reference(evaluate_paper(fragile, empty, registry), lock)
    assert next(v for v in shown if v.claim.id == "beats").detail.endswith("; fragile: flipped under AVX512")
    assert lock.numerics is not None and len(lock.numerics) == 12  # the machine's float numerics, one thread
    # a store whose runs reverse the ordering: the store's verdict shows, flagged against the lock
    reversed_ = type(store).open(f"sqlite:///{tmp_path}/reversed.db")
    # the paired gap is -1 in both seeds: surely reversed
    _fill(reversed_, registry, {0.01: ([3.0, 3.2], 1, 1), 0.1: ([2.0, 2.2], 1, 1), 0.02: ([0.7, 0.5], 1, 1)})
    now = evaluate_paper(paper, reversed_, registry)
    shown, source = with_reference(now, lock)
    beats = next(v for v in shown if v.claim.id == "beats")
    assert source == "store" and beats.verdict == "not reproduced"
    assert "differs from the reference run" in beats.detail and "which gave reproduced" in beats.detail
    assert disagreements(now, lock) == {"beats": ("not reproduced", "reproduced")}
    # a few seeds stored: the store's verdicts ("insufficient seeds"), not the lock's reference run
    partial = type(store).open(f"sqlite:///{tmp_path}/partial.db")
    _fill(partial, registry, {0.01: ([0.5], 1, 1), 0.1: ([2.0], 1, 1)})
    shown, source = with_reference(evaluate_paper(paper, partial, registry), lock)
    assert source == "store" and next(v for v in shown if v.claim.id == "beats").verdict == "insufficient seeds"


def test_the_overview_counts_per_scale_with_checks_apart_and_the_cpu_seconds(tmp_path, paper_and_registry, store):
    paper, registry = paper_and_registry
    _fill(store, registry)
    row = paper_overview(paper, store, registry)
    assert row.by_scale["cpu-reduced"]["reproduced"] == 1 and row.by_scale["paper-scale"]["not run"] == 1
    assert row.checks == 1 and sum(row.counts.values()) == 2  # the check is not counted among the claims
    assert row.cpu_s == pytest.approx(16.0) and row.source == "store"
    assert row.unchecked == 0  # "beats" holds and its negative control (0.01 -> 0.02) was run


def test_the_overview_counts_the_holding_claims_whose_negative_control_was_not_run(paper_and_registry, store):
    paper, registry = paper_and_registry
    _fill(store, registry, {noise: runs for noise, runs in RUNS.items() if noise != 0.02})  # the control's cell
    row = paper_overview(paper, store, registry)
    assert row.by_scale["cpu-reduced"]["reproduced"] == 1 and row.unchecked == 1
    _fill(store, registry, {0.02: ([1.9, 2.1], 1.0, 1.0)})  # the control run, and it holds: 0.01 < 0.02 too
    row = paper_overview(paper, store, registry)
    assert row.by_scale["cpu-reduced"]["uninformative"] == 1 and row.unchecked == 0


def test_a_damaged_lock_is_a_one_line_error_naming_it(tmp_path):
    (tmp_path / "toy-paper.yaml").write_text("paper: toy-paper\nclaims: {beats: {ours: []}}\n")
    with pytest.raises(BenchError,
                       match=r"toy-paper.yaml: not a verdict lock .*bench reproduce --all --controls --lock"):
        read_lock("toy-paper", tmp_path)
    assert read_lock("no-such-paper", tmp_path) is None


def test_the_reproduction_summary_says_how_many_holding_claims_lack_their_negative_control(paper_and_registry, store,
                                                                                          capsys):
    from app.verdicts import print_paper_counts as _print_paper_counts
    paper, registry = paper_and_registry
    _fill(store, registry, {noise: runs for noise, runs in RUNS.items() if noise != 0.02})
    _print_paper_counts([paper], store, registry, None)
    assert "1 of the claims counted reproduced or partially have a negative control not run (toy-paper 1)" in \
        " ".join(capsys.readouterr().out.split())
    _fill(store, registry, {0.02: RUNS[0.02]})
    _print_paper_counts([paper], store, registry, None)
    assert "negative control not run" not in capsys.readouterr().out


def test_a_verdict_that_differs_between_the_two_numerics_is_fragile_and_counts_as_underpowered(tmp_path):
    from leaderboard.lock import FRAGILE, Lock, LockedClaim, merge_numerics

    def lock(fp, verdicts):
        claims = {cid: LockedClaim(v, [1.0], "x", "detail", "none", 3, 1.0, 1.0, {fp: v})
                  for cid, v in verdicts.items()}
        return Lock("toy-paper", "abc", "2026-12-06", "m", "bench reproduce --all --controls --lock", claims, 1.0, 1.0,
                    fp)

    pinned = lock("aaa", {"same": "reproduced", "flips": "reproduced", "undecided": "underpowered"})
    other = lock("bbb", {"same": "reproduced", "flips": "not reproduced", "undecided": "underpowered"})
    merged = merge_numerics(pinned, other)
    assert merged.other_numerics == "bbb"
    assert merged.claims["same"].verdict == "reproduced" and not merged.claims["same"].fragile
    assert merged.claims["flips"].verdict == FRAGILE == "underpowered" and merged.claims["flips"].fragile
    assert merged.claims["flips"].verdicts == {"aaa": "reproduced", "bbb": "not reproduced"}
    path = write_lock(merged, tmp_path)
    back = read_lock("toy-paper", tmp_path)
    assert back.claims["flips"].verdicts == merged.claims["flips"].verdicts and back.other_numerics == "bbb"
    # a fresh run under either numerics agrees with the fragile claim's lock; a third verdict does not
    from types import SimpleNamespace
    fresh = [SimpleNamespace(claim=SimpleNamespace(id=cid), verdict=v)
             for cid, v in (("same", "reproduced"), ("flips", "not reproduced"), ("undecided", "underpowered"))]
    assert disagreements(fresh, back, "bbb") == {}
    assert disagreements(fresh, back, "aaa") == {}  # the fragile claim may come out either way
    fresh[0] = SimpleNamespace(claim=SimpleNamespace(id="same"), verdict="underpowered")
    assert disagreements(fresh, back, "aaa") == {"same": ("underpowered", "reproduced")}
    assert path.name == "toy-paper.yaml"


def test_numbers_are_locked_to_six_significant_digits_not_six_decimals():
    from leaderboard.lock import _num

    assert _num(4.07e-17) == 4.07e-17 and _num(0.1234567) == 0.123457 and _num(123456789.0) == 123457000.0


def test_a_lock_made_on_another_machine_with_the_same_inputs_gains_its_verdicts_and_a_changed_one_is_replaced():
    from leaderboard.lock import FRAGILE, Lock, LockedClaim, lock_to_write

    def lock(fp, verdicts, inputs="in-1", commit="abc"):
        claims = {cid: LockedClaim(v, [1.0], "x", "detail", "none", 3, 1.0, 1.0, {fp: v})
                  for cid, v in verdicts.items()}
        return Lock("toy-paper", commit, "2026-12-06", fp, "bench reproduce toy-paper --lock", claims, 1.0, 1.0, fp,
                    inputs=inputs)

    intel = lock("intel-pinned", {"same": "reproduced", "flips": "reproduced"})
    amd = lock("amd-pinned", {"same": "reproduced", "flips": "not reproduced"}, commit="def")
    kept = lock_to_write(intel, amd, second_numerics=False)
    # the Intel lock's numbers and commit stay; both machines' verdicts are held, and a claim they split is fragile
    assert (kept.commit, kept.numerics, kept.machine) == ("abc", "intel-pinned", "intel-pinned")
    assert kept.claims["flips"].verdicts == {"intel-pinned": "reproduced", "amd-pinned": "not reproduced"}
    assert kept.claims["flips"].verdict == FRAGILE and kept.claims["same"].verdict == "reproduced"
    # changed inputs: the new lock alone; the same machine again: the new lock alone
    changed = lock("amd-pinned", {"same": "reproduced", "flips": "not reproduced"}, inputs="in-2")
    assert lock_to_write(intel, changed, second_numerics=False) is changed
    again = lock("intel-pinned", {"same": "reproduced", "flips": "not reproduced"}, commit="ghi")
    assert lock_to_write(intel, again, second_numerics=False) is again
    assert lock_to_write(None, amd, second_numerics=False) is amd
    # the second numerics need a lock to join
    assert lock_to_write(intel, amd, second_numerics=True).claims["flips"].fragile
    with pytest.raises(BenchError, match="no lock under the pinned numerics"):
        lock_to_write(None, amd, second_numerics=True)
