"""The verdict lock's file, `leaderboard/verdicts/<slug>.yaml`, written and read, and shown as the reference run.

A lock (made by leaderboard/lock.py) holds, for every claim, positive control and check it ran, the verdict, the
interval it rests on (the deciding quantity, its estimate, 95 % interval, n, raw and Holm-adjusted p, the seeds an
undecided claim needs), each cell's mean, interval, n and per-seed values, how its negative control and its
switched-off runs came out, the seeds, and what its runs cost (wall and CPU seconds), with the commit, date and
machine of the run and the fingerprint of its float numerics. A claim whose verdict differs between the two numerics
it was locked under is fragile, and shows as underpowered.

With no runs of a paper in the store, `bench claims` and the leaderboard show the locked verdicts, labelled as the
reference run; with runs, they show the store's and flag each disagreement with the lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from bench.errors import BenchError
from leaderboard.claims.judge import CellStat
from leaderboard.claims.model import Claim
from leaderboard.claims.parsed import read_yaml
from leaderboard.claims.verdict import PENDING, Evidence, Verdict

LOCK_DIR = Path(__file__).resolve().parent.parent / "verdicts"
LOCK_COMMAND = "bench reproduce --all --controls --lock"
FRAGILE = "underpowered"  # what a verdict that rounding flips counts as
EVIDENCE_FIELDS = ("quantity", "estimate", "low", "high", "n", "method", "threshold", "side", "p", "p_adjusted",
                   "level", "family", "direction", "seeds_needed", "cost_s", "extra", "extra_ok", "partial")


@dataclass(frozen=True)
class LockedClaim:
    verdict: str                 # the verdict shown: the numerics' common one, or FRAGILE when they differ
    ours: list[float]
    ours_text: str
    detail: str
    control: str
    seeds: int
    wall_s: float
    cpu_s: float | None
    verdicts: dict[str, str] = field(default_factory=dict)  # {numerics fingerprint: verdict under it}
    switched: str = "none"
    evidence: dict = field(default_factory=dict)            # Evidence's fields (EVIDENCE_FIELDS), plain numbers
    cells: list[dict] = field(default_factory=list)         # per group: label, mean, low, high, n, values

    @property
    def fragile(self) -> bool:
        return len(set(self.verdicts.values())) > 1

    def verdict_under(self, numerics: str) -> str | None:
        """The verdict locked for these numerics (None when the lock did not run under them)."""
        return self.verdicts.get(numerics)


@dataclass(frozen=True)
class Lock:
    slug: str
    commit: str
    date: str
    machine: str
    command: str
    claims: dict[str, LockedClaim]
    wall_s: float = 0.0          # the paper's runs, each once (claims share cells)
    cpu_s: float | None = None
    numerics: str | None = None  # bench.numerics.fingerprint() of the machine, every cell on one thread
    other_numerics: str | None = None  # the last fingerprint whose verdicts were added (scalar kernels, another CPU)
    inputs: str | None = None    # paper_inputs(): the digest of what the verdicts depend on, when locked

    @property
    def label(self) -> str:
        return f"reference run of {self.date} at commit {self.commit[:10]} on {self.machine}"


def write_lock(lock: Lock, folder: Path = LOCK_DIR) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{lock.slug}.yaml"
    data = {"paper": lock.slug, "commit": lock.commit, "date": lock.date, "machine": lock.machine,
            "command": lock.command, "wall_s": lock.wall_s, "cpu_s": lock.cpu_s, "numerics": lock.numerics,
            "other_numerics": lock.other_numerics, "inputs": lock.inputs,
            "claims": {cid: {"verdict": c.verdict, "verdicts": c.verdicts, "ours": c.ours, "ours_text": c.ours_text,
                             "control": c.control, "switched": c.switched, "seeds": c.seeds, "wall_s": c.wall_s,
                             "cpu_s": c.cpu_s, "evidence": c.evidence, "cells": c.cells, "detail": c.detail}
                       for cid, c in lock.claims.items()}}
    header = (f"# The verdict lock of {lock.slug}: written by `{lock.command}`; compared by a test tier\n"
              "# (tests/leaderboard/test_verdict_lock.py). A changed verdict is a reviewed diff, never a silent\n"
              "# re-pin.\n")
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    return path


def read_lock(slug: str, folder: Path = LOCK_DIR) -> Lock | None:
    """The paper's lock, or None when it has none; a damaged file is a one-line error naming it."""
    path = folder / f"{slug}.yaml"
    if not path.is_file():
        return None
    try:
        data = read_yaml(path)  # parsed once per state of the file (claims.parsed)
        claims = {cid: LockedClaim(c["verdict"], list(c.get("ours") or []), c.get("ours_text", ""), c.get("detail", ""),
                                   c.get("control", "none"), int(c["seeds"]), float(c.get("wall_s") or 0.0),
                                   c.get("cpu_s"), dict(c.get("verdicts") or {}), c.get("switched", "none"),
                                   dict(c.get("evidence") or {}), list(c.get("cells") or []))
                  for cid, c in (data.get("claims") or {}).items()}
        return Lock(data["paper"], str(data["commit"]), str(data["date"]), data["machine"], data["command"], claims,
                    float(data.get("wall_s") or 0.0), data.get("cpu_s"), data.get("numerics"),
                    data.get("other_numerics"), data.get("inputs"))
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BenchError(f"{path}: not a verdict lock ({type(exc).__name__}: {exc}); "
                         f"rewrite it with `{LOCK_COMMAND}`") from None


def with_reference(verdicts: list[Verdict], lock: Lock | None) -> tuple[list[Verdict], str]:
    """(verdicts to show, where they come from: "store" or "reference").

    A paper with no finished run of any locked claim's cells in the store shows the lock's verdicts (with their
    intervals), each saying it is the reference run and how to re-run it; otherwise the store's verdicts show (a few
    seeds stored give "insufficient seeds", not the lock), each disagreement with the lock flagged. A claim the lock
    found fragile (its verdict differs between the two numerics) shows as underpowered either way.
    """
    if lock is None:
        return verdicts, "store"
    locked = [v for v in verdicts if v.claim.id in lock.claims]
    if locked and all(v.runs_found == 0 for v in locked):
        shown = [replace(v, verdict=c.verdict, ours=c.ours, ours_text=c.ours_text, control=c.control,
                         seeds_found=c.seeds, switched=c.switched, evidence=locked_evidence(c),
                         detail=f"reference run ({lock.date}, {lock.commit[:10]}): "
                                f"{_with_fragile(c, v.claim, lock)}", source="reference")
                 if (c := lock.claims.get(v.claim.id)) else v for v in verdicts]
        return shown, "reference"
    flagged = []
    for v in verdicts:
        c = lock.claims.get(v.claim.id)
        if c is not None and c.fragile and v.verdict not in PENDING:
            v = replace(v, verdict=FRAGILE, detail=f"{fragile_note(c, lock)}; this store's runs gave {v.verdict}; "
                                                   f"{v.detail}")
        elif c is not None and v.verdict not in PENDING and v.verdict != c.verdict:
            v = replace(v, detail=f"differs from the {lock.label}, which gave {c.verdict}; {v.detail}")
        flagged.append(v)
    return flagged, "store"


def locked_evidence(c: LockedClaim) -> Evidence | None:
    """The lock's interval and cells as the Evidence a card shows."""
    if not c.evidence:
        return None
    fields = {k: v for k, v in c.evidence.items() if k in EVIDENCE_FIELDS}
    cells = tuple(CellStat(d["label"], d["mean"], d["low"], d["high"], d["n"], tuple(d.get("values") or ()))
                  for d in c.cells)
    return Evidence(**fields, cells=cells)


def fragile_note(c: LockedClaim, lock: Lock) -> str:
    under = ", ".join(f"{verdict} under numerics {fp}" for fp, verdict in c.verdicts.items())
    return f"fragile: float rounding decides it ({under}), so it counts as underpowered"


def _with_fragile(c: LockedClaim, claim: Claim, lock: Lock) -> str:
    """A locked detail with the fragility the two numerics showed, and the claims file's `fragile:` note."""
    notes = [fragile_note(c, lock)] if c.fragile else []
    if claim.fragile and f"fragile: {claim.fragile}" not in c.detail:
        notes.append(f"fragile: {claim.fragile}")
    return "; ".join([c.detail, *notes])
