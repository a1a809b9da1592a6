"""A paper's runs read at once (leaderboard/claims/stored.py): the same answers as the store's, one query each for
the whole paper, and the store's own answer wherever memory could differ."""

from __future__ import annotations

from sqlalchemy import event

from bench.cells import Entry, make_cell
from bench.spec import RunRecord
from leaderboard.claims import evaluate_paper, load_paper
from leaderboard.claims.cells import claim_groups
from leaderboard.claims.stored import PaperRuns
from tests.leaderboard.test_claims import CLAIMS, _fill, with_claims


def _queries(store) -> list[str]:
    sent: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
    return sent


def _every_key(runs: PaperRuns, paper) -> dict[str, int]:
    out = {}
    for claim in paper.claims:
        for group in claim_groups(claim, True, paper, runs.registry):
            cells, keys = runs.cells(group, claim.seeds)
            out |= {k: runs.registry.task_version(c.task) for c, k in zip(cells, keys, strict=True)}
    return out


def _read_toy_paper(tmp_path, toy_registry, store):
    """(registry, the failed cell, PaperRuns having read the toy paper, {key: task version} of its every cell)."""
    registry = with_claims(tmp_path, toy_registry, CLAIMS)
    _fill(store, registry)
    failed = make_cell(registry, Entry("toy_noisy"), Entry("toy_target", {"dim": 7}), 0)
    store.save(RunRecord(failed, "failed", 2, error="RuntimeError: no world"), runner="local")
    paper = load_paper(registry, "toy-paper")
    runs = PaperRuns(store, registry)
    runs.read_paper(paper)
    return registry, failed, runs, _every_key(runs, paper)


def test_answers_from_memory_equal_the_stores(tmp_path, toy_registry, store):
    _, failed, runs, versions = _read_toy_paper(tmp_path, toy_registry, store)
    keys = list(versions)
    sent = _queries(store)
    assert runs.done_keys(keys, versions) == store.done_keys(keys, versions) != set()
    done = sorted(runs.done_keys(keys, versions))
    assert runs.metrics(done) == store.metrics(done)
    assert len(sent) == 2  # the two store calls of this test: memory answered the rest
    clean = [k for k in keys if k != failed.run_key]
    assert runs.unfinished(clean) == {} == store.unfinished(clean)


def test_what_memory_cannot_answer_goes_to_the_store(tmp_path, toy_registry, store):
    """A key never read, another task version, a stopped run (whose order the store decides): the store answers."""
    registry, failed, runs, versions = _read_toy_paper(tmp_path, toy_registry, store)
    sent = _queries(store)
    assert runs.unfinished([failed.run_key]) == {failed.run_key: ("failed", "RuntimeError: no world")}
    assert runs.done_keys(list(versions), {k: 1 for k in versions}) == set()  # stale: version 1 is not stored
    other = make_cell(registry, Entry("toy_noisy", {"noise": 0.3}), Entry("toy_target"), 0).run_key
    assert runs.done_keys([other], {other: 2}) == set() and runs.metrics([other]) == {}
    assert len(sent) == 4


def test_a_paper_is_read_in_one_query_each(tmp_path, toy_registry, store):
    """Every claim, negative control and switched-off claim of the paper judged from one read: the store sees the
    emptiness check, the done keys, the stopped runs and the metrics, and then only what a judge reads besides
    (curves, the CPU seconds an underpowered claim's seeds cost)."""
    registry = with_claims(tmp_path, toy_registry, CLAIMS)
    _fill(store, registry)
    paper = load_paper(registry, "toy-paper")
    sent = _queries(store)
    evaluate_paper(paper, store, registry)
    per_claim = [q for q in sent if "FROM runs" in q and "cpu_s" not in q and "curve" not in q]
    assert len(per_claim) == 3  # the emptiness check, the done keys, the stopped runs (metrics: metric_values)
