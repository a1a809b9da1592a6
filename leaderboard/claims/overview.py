"""A paper's claims counted by verdict, per scale (checks and controls apart), with what their runs cost; with
nothing stored, its verdict lock's reference run."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.errors import BenchError
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims.cost import paper_cost
from leaderboard.claims.evaluate import evaluate_paper
from leaderboard.claims.load import load_paper
from leaderboard.claims.model import SCALES, Paper
from leaderboard.claims.reference import read_lock, with_reference
from leaderboard.claims.verdict import HOLDS, VERDICTS, Verdict, claims_only


@dataclass(frozen=True)
class PaperOverview:
    """A paper's claims counted by verdict, per scale (checks and controls apart), and what they cost."""

    slug: str
    title: str
    counts: dict[str, int]                                   # the claims of every scale, by verdict
    error: str | None = None
    by_scale: dict[str, dict[str, int]] = field(default_factory=dict)
    checks: int = 0                                          # sanity checks: judged, never counted
    cpu_s: float | None = None                               # CPU seconds of the shown runs (None: unmeasured)
    source: str = "store"                                    # "reference": the verdict lock's, nothing stored
    unchecked: int = 0                                       # holding claims whose negative control was not run


def count_verdicts(verdicts: list[Verdict]) -> dict[str, int]:
    counts = {v: 0 for v in VERDICTS}
    for verdict in verdicts:
        counts[verdict.verdict] += 1
    return counts


def paper_overview(paper: Paper, store: Store, registry: Registry, seeds: int | None = None) -> PaperOverview:
    """A paper's claims counted by verdict and per scale, its checks, and the CPU seconds behind them; with nothing
    stored, its verdict lock's reference run."""
    lock = read_lock(paper.slug) if seeds is None else None  # a lock holds the claims' own seeds only
    verdicts, source = with_reference(evaluate_paper(paper, store, registry, seeds=seeds), lock)
    claims = claims_only(verdicts)
    by_scale = {scale: count_verdicts([v for v in claims if v.claim.scale == scale])
                for scale in SCALES if any(v.claim.scale == scale for v in claims)}
    checks = sum(v.claim.role == "check" for v in verdicts)
    unchecked = sum(v.verdict in HOLDS and v.control == "not run" for v in claims)
    cpu_s = lock.cpu_s if source == "reference" else paper_cost(verdicts, store, registry)
    return PaperOverview(paper.slug, paper.title, count_verdicts(claims), None, by_scale, checks, cpu_s, source,
                         unchecked)


def overview(store: Store, registry: Registry) -> list[PaperOverview]:
    """Per paper, its paper_overview (or why its claims file cannot be read)."""
    rows = []
    for slug in registry.papers():
        try:
            rows.append(paper_overview(load_paper(registry, slug), store, registry))
        except BenchError as exc:
            rows.append(PaperOverview(slug, slug, {}, str(exc)))
    return rows
