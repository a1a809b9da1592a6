"""What a claim's runs cost: their wall and CPU seconds in the store, each run once."""

from __future__ import annotations

from sqlalchemy import select

from bench.models import Run
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims.cells import claim_groups, group_cells
from leaderboard.claims.model import Paper
from leaderboard.claims.verdict import PENDING, Verdict


def claim_keys(verdict: Verdict, registry: Registry, paper: Paper | None = None) -> set[str]:
    """The run keys of a claim's cells, its negative control's and (given its paper) its switched-off cells, at the
    claim's seeds."""
    claim = verdict.claim
    return {c.run_key for g in claim_groups(claim, True, paper, registry)
            for c in group_cells(g, registry, claim.seeds)}


def runs_cost(store: Store, keys: set[str]) -> tuple[float, float | None]:
    """(wall, CPU) seconds of the finished runs among `keys`; CPU is None when a run predates its measurement."""
    with store.engine.connect() as connection:
        rows = connection.execute(select(Run.wall_s, Run.cpu_s).where(Run.run_key.in_(keys),
                                                                      Run.status == "done")).all()
    wall = sum(r.wall_s or 0.0 for r in rows)
    cpu = None if any(r.cpu_s is None for r in rows) else sum(r.cpu_s for r in rows)
    return round(wall, 1), None if cpu is None else round(cpu, 1)


def paper_cost(verdicts: list[Verdict], store: Store, registry: Registry) -> float | None:
    """CPU seconds of the stored runs behind a paper's verdicts (each run once); None when nothing ran or a run's
    CPU time was not measured."""
    keys = {key for v in verdicts if v.verdict not in PENDING for key in claim_keys(v, registry)}
    return runs_cost(store, keys)[1] if keys else None
