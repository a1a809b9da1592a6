"""The verdict lock: `leaderboard/verdicts/<slug>.yaml`, the reference run of a paper's CPU-scale claims.

`bench reproduce --all --controls --lock` writes one file per paper: for every claim, positive control and
check it ran, the verdict, the measured values, how its negative control came out, the seeds, and what its
runs cost (wall and CPU seconds, summed over its cells and its control's), with the commit, date and
machine of the run and the fingerprint of its float numerics (bench/numerics.py: every cell on one thread).
The slow tier reproduces every paper from a fresh store and compares with these files, so a verdict that
changes is a diff in review, never a silent re-pin.

With no runs of a paper in the store, `bench claims` and the leaderboard show the locked verdicts, labelled
as the reference run; with runs, they show the store's and flag each disagreement with the lock.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import yaml
from sqlalchemy import select

from bench.errors import BenchError
from bench.models import Run
from bench.numerics import fingerprint
from bench.provenance import cpu_model, git_state, package_versions
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import PENDING, Paper, Verdict, claim_groups, group_cells

LOCK_DIR = Path(__file__).resolve().parent / "verdicts"
LOCK_COMMAND = "bench reproduce --all --controls --lock"


@dataclass(frozen=True)
class LockedClaim:
    verdict: str
    ours: list[float]
    ours_text: str
    detail: str
    control: str
    seeds: int
    wall_s: float
    cpu_s: float | None


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

    @property
    def label(self) -> str:
        return f"reference run of {self.date} at commit {self.commit[:10]} on {self.machine}"


def claim_keys(verdict: Verdict, registry: Registry) -> set[str]:
    """The run keys of a claim's cells and its negative control's, at the claim's seeds."""
    claim = verdict.claim
    return {c.run_key for g in claim_groups(claim, controls=True) for c in group_cells(g, registry, claim.seeds)}


def runs_cost(store: Store, keys: set[str]) -> tuple[float, float | None]:
    """(wall, CPU) seconds of the finished runs among `keys`; CPU is None when a run predates its measurement."""
    with store.engine.connect() as connection:
        rows = connection.execute(select(Run.wall_s, Run.cpu_s).where(Run.run_key.in_(keys),
                                                                      Run.status == "done")).all()
    wall = sum(r.wall_s or 0.0 for r in rows)
    cpu = None if any(r.cpu_s is None for r in rows) else sum(r.cpu_s for r in rows)
    return round(wall, 1), None if cpu is None else round(cpu, 1)


def machine() -> str:
    """The machine in one line: CPU model and cores, OS, Python and torch."""
    torch = package_versions().get("torch")
    return (f"{cpu_model()}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}"
            + (f", torch {torch}" if torch else ""))


def commit() -> str:
    """HEAD of the checkout, with +dirty when its tracked files differ from it (or 'unknown' outside git); the locks
    themselves are this command's output, not the code it ran, so they never make it dirty."""
    sha, dirty = git_state(exclude=("leaderboard/verdicts",))
    return "unknown" if sha is None else sha + ("+dirty" if dirty else "")


def make_lock(paper: Paper, verdicts: list[Verdict], store: Store, registry: Registry, scales: tuple[str, ...]) -> Lock:
    """The lock of a paper's claims at `scales` (controls, claims and checks), from its judged verdicts."""
    claims, every_key = {}, set()
    for v in verdicts:
        if v.claim.scale not in scales:
            continue
        keys = claim_keys(v, registry)
        every_key |= keys
        wall, cpu = runs_cost(store, keys)
        claims[v.claim.id] = LockedClaim(v.verdict, [round(float(x), 6) for x in v.ours], v.ours_text, v.detail,
                                         v.control, v.claim.seeds, wall, cpu)
    wall, cpu = runs_cost(store, every_key) if every_key else (0.0, None)
    return Lock(paper.slug, commit(), date.today().isoformat(), machine(), LOCK_COMMAND, claims, wall, cpu,
                fingerprint(1))


def write_lock(lock: Lock, folder: Path = LOCK_DIR) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{lock.slug}.yaml"
    data = {"paper": lock.slug, "commit": lock.commit, "date": lock.date, "machine": lock.machine,
            "command": lock.command, "wall_s": lock.wall_s, "cpu_s": lock.cpu_s, "numerics": lock.numerics,
            "claims": {cid: {"verdict": c.verdict, "ours": c.ours, "ours_text": c.ours_text, "control": c.control,
                             "seeds": c.seeds, "wall_s": c.wall_s, "cpu_s": c.cpu_s, "detail": c.detail}
                       for cid, c in lock.claims.items()}}
    header = (f"# The verdict lock of {lock.slug}: written by `{lock.command}`; compared by a test tier\n"
              "# (tests/leaderboard/test_verdict_lock.py: slow, or heavy by hand: its BY_HAND and MACHINE_TIMED).\n"
              "# A changed verdict is a reviewed diff, never a silent re-pin.\n")
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    return path


def read_lock(slug: str, folder: Path = LOCK_DIR) -> Lock | None:
    """The paper's lock, or None when it has none; a damaged file is a one-line error naming it."""
    path = folder / f"{slug}.yaml"
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text())
        claims = {cid: LockedClaim(c["verdict"], list(c.get("ours") or []), c.get("ours_text", ""), c.get("detail", ""),
                                   c.get("control", "none"), int(c["seeds"]), float(c.get("wall_s") or 0.0),
                                   c.get("cpu_s"))
                  for cid, c in (data.get("claims") or {}).items()}
        return Lock(data["paper"], str(data["commit"]), str(data["date"]), data["machine"], data["command"], claims,
                    float(data.get("wall_s") or 0.0), data.get("cpu_s"), data.get("numerics"))
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BenchError(f"{path}: not a verdict lock ({type(exc).__name__}: {exc}); "
                         f"rewrite it with `{LOCK_COMMAND}`") from None


def with_reference(verdicts: list[Verdict], lock: Lock | None) -> tuple[list[Verdict], str]:
    """(verdicts to show, where they come from: "store" or "reference").

    A paper with no finished run of any locked claim's cells in the store shows the lock's verdicts, each saying it
    is the reference run and how to re-run it; otherwise the store's verdicts show (a few seeds stored give
    "insufficient seeds", not the lock), each disagreement with the lock flagged.
    """
    if lock is None:
        return verdicts, "store"
    locked = [v for v in verdicts if v.claim.id in lock.claims]
    if locked and all(v.runs_found == 0 for v in locked):
        shown = [replace(v, verdict=c.verdict, ours=c.ours, ours_text=c.ours_text, control=c.control,
                         seeds_found=c.seeds,
                         detail=f"reference run ({lock.date}, {lock.commit[:10]}): {_with_fragile(c.detail, v.claim)}",
                         source="reference")
                 if (c := lock.claims.get(v.claim.id)) else v for v in verdicts]
        return shown, "reference"
    flagged = []
    for v in verdicts:
        c = lock.claims.get(v.claim.id)
        if c is not None and v.verdict not in PENDING and v.verdict != c.verdict:
            v = replace(v, detail=f"differs from the {lock.label}, which gave {c.verdict}; {v.detail}")
        flagged.append(v)
    return flagged, "store"


def _with_fragile(detail: str, claim) -> str:
    """A locked detail with the claims file's `fragile:` note, which may postdate the lock."""
    note = f"fragile: {claim.fragile}"
    return detail if not claim.fragile or note in detail else f"{detail}; {note}"


def disagreements(verdicts: list[Verdict], lock: Lock) -> dict[str, tuple[str, str]]:
    """{claim id: (verdict now, locked verdict)} for every locked claim whose verdict differs (or is missing)."""
    now = {v.claim.id: v.verdict for v in verdicts}
    return {cid: (now.get(cid, "missing"), c.verdict) for cid, c in lock.claims.items() if now.get(cid) != c.verdict}



def paper_cost(verdicts: list[Verdict], store: Store, registry: Registry, lock: Lock | None = None) -> float | None:
    """CPU seconds of the runs behind a paper's shown verdicts (each run once): the lock's when it is shown, else the
    store's; None when nothing ran or a run's CPU time was not measured."""
    if lock is not None:
        return lock.cpu_s
    keys = {key for v in verdicts if v.verdict not in PENDING for key in claim_keys(v, registry)}
    return runs_cost(store, keys)[1] if keys else None
