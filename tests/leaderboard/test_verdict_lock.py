"""Every paper's CPU-scale verdicts against its verdict lock (leaderboard/verdicts/<slug>.yaml).

The slow test reproduces each paper from a fresh store, its claims and their negative controls at the claims'
own seeds, and compares every verdict with the lock: a verdict that changes fails here until the lock is
rewritten (`bench reproduce --all --controls --lock`) and the diff reviewed. The fast tests check that each lock
matches its claims file (the same CPU-scale claims and seeds), so that editing a claim without re-locking fails.
"""

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import CPU_SCALES, evaluate_paper, group_cells, load_paper
from leaderboard.claims import claim_groups
from leaderboard.lock import LOCK_DIR, disagreements, read_lock
from runners.local import run_cells

REGISTRY = Registry.discover()
PAPERS = REGISTRY.papers()


def _cpu_claims(paper):
    return [c for c in paper.claims if c.scale in CPU_SCALES]


@pytest.mark.parametrize("slug", PAPERS)
def test_the_lock_matches_its_claims_file(slug):
    lock = read_lock(slug)
    assert lock is not None, f"{LOCK_DIR}/{slug}.yaml is missing: run `bench reproduce --all --controls --lock`"
    claims = _cpu_claims(load_paper(REGISTRY, slug))
    assert set(lock.claims) == {c.id for c in claims}
    assert {cid: c.seeds for cid, c in lock.claims.items()} == {c.id: c.seeds for c in claims}
    assert not lock.commit.endswith("+dirty") and lock.cpu_s is not None and lock.cpu_s > 0


def test_no_lock_without_a_paper():
    assert {p.stem for p in LOCK_DIR.glob("*.yaml")} <= set(PAPERS)


@pytest.mark.slow
@pytest.mark.parametrize("slug", PAPERS)
def test_a_fresh_reproduction_gives_the_locked_verdicts(slug, tmp_path):
    paper, lock = load_paper(REGISTRY, slug), read_lock(slug)
    cells = {cell for claim in _cpu_claims(paper) for g in claim_groups(claim, controls=True)
             for cell in group_cells(g, REGISTRY, claim.seeds, check=True)}
    store = Store.open(f"sqlite:///{tmp_path}/lock.db")
    summary = run_cells(sorted(cells, key=lambda c: c.run_key), store, REGISTRY)
    assert set(summary.counts) <= {"done", "skipped"}, summary.counts
    verdicts = [v for v in evaluate_paper(paper, store, REGISTRY) if v.claim.scale in CPU_SCALES]
    assert disagreements(verdicts, lock) == {}
