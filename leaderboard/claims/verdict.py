"""A claim's verdict, and the interval it rests on, as the CLI, the cards, the exports and the locks show them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from leaderboard.claims.judge import CellStat, Judged, fmt
from leaderboard.claims.model import Claim
from leaderboard.claims.statistics import ALPHA

VERDICTS = ("reproduced", "partially", "not reproduced", "underpowered", "uninformative", "inconclusive",
            "no-harm holds", "no-harm fails", "insufficient seeds", "not run")
HOLDS = ("reproduced", "partially")
PENDING = ("not run", "insufficient seeds")


@dataclass(frozen=True)
class Evidence:
    """The interval a verdict rests on: the deciding quantity's estimate and 95 % interval against the claim's
    threshold, its raw and Holm-adjusted p-value, and for an undecided claim the seeds that would decide it."""

    quantity: str = ""
    estimate: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    n: int = 0
    method: str = "t"
    threshold: float = float("nan")
    side: int = 1
    p: float = float("nan")
    p_adjusted: float = float("nan")
    level: float = ALPHA       # the level Holm tests this claim at (α / (m − rank))
    family: int = 1            # the claims in the paper's Holm family
    direction: str = "holds"
    seeds_needed: int | None = None
    cost_s: float | None = None
    cells: tuple[CellStat, ...] = ()
    extra: str = ""
    extra_ok: bool = True
    partial: str = ""

    def text(self) -> str:
        if not self.quantity:
            return ""
        if not np.isfinite(self.low):
            interval = f"{fmt(self.estimate)}, no interval from {self.n} value(s)"
        elif self.method == "exact":
            interval = f"{fmt(self.estimate)} (exact: no seed noise)"
        else:
            interval = (f"{fmt(self.estimate)}, 95 % {self.method} interval [{fmt(self.low)}, {fmt(self.high)}], "
                        f"n={self.n}")
        p = f"p={self.p:.2g}" if np.isfinite(self.p) else "p n/a"
        if self.family > 1 and np.isfinite(self.p_adjusted):
            p += f", Holm-adjusted {self.p_adjusted:.2g} over {self.family} claims"
        needed = ""
        if self.seeds_needed is not None:
            cost = f", about {self.cost_s / 60:.0f} CPU-min" if self.cost_s is not None else ""
            needed = f"; 80 % power needs {self.seeds_needed} seeds{cost}"
        elif np.isfinite(self.estimate) and not np.isfinite(self.low):
            needed = "; needs ≥ 2 seeds for an interval"
        return f"{self.quantity}: {interval} ({p}){needed}"


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str
    ours: list[float]
    ours_text: str
    paper_text: str
    detail: str
    seeds_found: int
    control: str = "none"  # the negative control: none (the claim has none), not run, fails (as it must), passes
    source: str = "store"  # "reference": shown from the verdict lock (claims/reference.py), nothing stored yet
    runs_found: int = 0    # finished runs of the claim's cells in the store, over every group and seed
    evidence: Evidence | None = None  # the interval the verdict rests on
    judged: Judged | None = None      # the criterion's evaluation (for Holm's adjustment across the paper)
    switched: str = "none"  # with each credited method switched off: none (nothing to switch), not run, fails, holds


def claims_only(verdicts: list[Verdict]) -> list[Verdict]:
    """The paper's claims, without its worlds' positive controls and its sanity checks (never counted)."""
    return [v for v in verdicts if v.claim.role == "claim"]
