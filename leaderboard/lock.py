"""The verdict lock: `leaderboard/verdicts/<slug>.yaml`, the reference run of a paper's CPU-scale claims.

`bench reproduce --all --controls --lock` (or `bench reproduce SLUG --lock` for one paper) writes one file per paper:
for every claim, positive control and check it ran, the verdict, the interval it rests on (leaderboard/evidence.py:
the deciding quantity, its estimate, 95 % interval, n, raw and Holm-adjusted p, the seeds an undecided claim needs),
each cell's mean, interval, n and per-seed values, how its negative control and its switched-off runs came out, the
seeds, and what its runs cost (wall and CPU seconds), with the commit, date and machine of the run and the fingerprint
of its float numerics (bench/numerics.py: every cell on one thread).

A lock holds each claim's verdict under two numerics: the machine's own (kernels pinned at AVX2) and
`ATEN_CPU_CAPABILITY=default` (`bench reproduce ... --lock --numerics default` adds them to the locks). A claim whose
verdict differs between the two is fragile: rounding decides it, so it is shown as underpowered, never as reproduced
or not reproduced.
The slow tier reproduces every paper from a fresh store and compares with these files, so a verdict that
changes is a diff in review, never a silent re-pin.

With no runs of a paper in the store, `bench claims` and the leaderboard show the locked verdicts, labelled
as the reference run; with runs, they show the store's and flag each disagreement with the lock.
"""

from __future__ import annotations

import ast
import hashlib
import math
import os
import platform
from dataclasses import dataclass, field, replace
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
from leaderboard.claims import PENDING, Evidence, Paper, Verdict, claim_groups, group_cells
from leaderboard.judge import CellStat

LOCK_DIR = Path(__file__).resolve().parent / "verdicts"
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
    other_numerics: str | None = None  # the fingerprint of the second run (ATEN_CPU_CAPABILITY=default), if made
    inputs: str | None = None    # paper_inputs(): the digest of what the verdicts depend on, when locked

    @property
    def label(self) -> str:
        return f"reference run of {self.date} at commit {self.commit[:10]} on {self.machine}"


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


def make_lock(paper: Paper, verdicts: list[Verdict], store: Store, registry: Registry, scales: tuple[str, ...],
              command: str = LOCK_COMMAND) -> Lock:
    """The lock of a paper's claims at `scales` (controls, claims and checks), from its judged verdicts, under this
    machine's numerics."""
    numerics = fingerprint(1)
    claims, every_key = {}, set()
    for v in verdicts:
        if v.claim.scale not in scales:
            continue
        keys = claim_keys(v, registry, paper)
        every_key |= keys
        wall, cpu = runs_cost(store, keys)
        claims[v.claim.id] = LockedClaim(v.verdict, [_num(x) for x in v.ours], v.ours_text, v.detail, v.control,
                                         v.claim.seeds, wall, cpu, {numerics: v.verdict}, v.switched,
                                         _evidence(v), _cells(v))
    wall, cpu = runs_cost(store, every_key) if every_key else (0.0, None)
    return Lock(paper.slug, commit(), date.today().isoformat(), machine(), command, claims, wall, cpu, numerics,
                inputs=paper_inputs(paper, registry))


ROOT = Path(__file__).resolve().parent.parent
INPUT_PACKAGES = ("bench", "methods", "tasks")


def paper_inputs(paper: Paper, registry: Registry) -> str:
    """sha256 of what a paper's verdicts depend on: its claims file, constraints.txt, and the source of every module
    in the import closure of its methods and tasks (claims, controls and switched-off cells) within the repository's
    bench/, methods/ and tasks/. The lock test compares a paper whose digest changed since its lock on every run."""
    names = {g.method for c in paper.claims for g in claim_groups(c, True, paper, registry)}
    tasks = {g.task for c in paper.claims for g in claim_groups(c, True, paper, registry)}
    modules = ({registry.listing("method", n).module for n in names}
               | {registry.listing("task", n).module for n in tasks})
    files = {registry.paper_path(paper.slug), ROOT / "constraints.txt"}
    todo = list(modules)
    while todo:
        path = _module_file(todo.pop())
        if path is None or path in files:
            continue
        files.add(path)
        todo.extend(_imports(path))
    digest = hashlib.sha256()
    for path in sorted(files):
        if path.is_file():
            digest.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _module_file(module: str) -> Path | None:
    if module.split(".")[0] not in INPUT_PACKAGES:
        return None
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(path: Path) -> list[str]:
    """The repository modules a file imports (absolute and relative, at any depth: imports inside functions count),
    with the packages on their way (a package's __init__ runs first)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0] + ".__init__"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:-node.level]
                base = ".".join([*parent, *([base] if base else [])])
            found += [base] + [f"{base}.{a.name}" for a in node.names]
    out = []
    for name in found:
        parts = name.split(".")
        out += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return out


def _num(x: float) -> float:
    """Six significant digits (not six decimals: 4.07e-17 stays 4.07e-17, not 0.0); NaN and inf as they are."""
    x = float(x)
    return float(f"{x:.6g}") if math.isfinite(x) else x


def _evidence(v: Verdict) -> dict:
    if v.evidence is None:
        return {}
    data = {k: getattr(v.evidence, k) for k in EVIDENCE_FIELDS}
    return {k: _num(x) if isinstance(x, float) else x for k, x in data.items()}


def _cells(v: Verdict) -> list[dict]:
    if v.evidence is None:
        return []
    return [{"label": c.label, "mean": _num(c.mean), "low": _num(c.low), "high": _num(c.high), "n": c.n,
             "values": [_num(x) for x in c.values]} for c in v.evidence.cells]


def merge_numerics(lock: Lock, other: Lock) -> Lock:
    """`lock` (the machine's own numerics) with `other`'s verdicts (the same claims under the second numerics): a
    claim whose verdicts differ is shown as FRAGILE."""
    claims = {}
    for cid, c in lock.claims.items():
        verdicts = {**c.verdicts}
        if cid in other.claims:
            verdicts.update(other.claims[cid].verdicts)
        shown = c.verdicts.get(lock.numerics, c.verdict) if len(set(verdicts.values())) <= 1 else FRAGILE
        claims[cid] = replace(c, verdict=shown, verdicts=verdicts)
    return replace(lock, claims=claims, other_numerics=other.numerics)


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
        data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
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


def _with_fragile(c: LockedClaim, claim, lock: Lock) -> str:
    """A locked detail with the fragility the two numerics showed, and the claims file's `fragile:` note."""
    notes = [fragile_note(c, lock)] if c.fragile else []
    if claim.fragile and f"fragile: {claim.fragile}" not in c.detail:
        notes.append(f"fragile: {claim.fragile}")
    return "; ".join([c.detail, *notes])


def disagreements(verdicts: list[Verdict], lock: Lock, numerics: str | None = None) -> dict[str, tuple[str, str]]:
    """{claim id: (verdict now, locked verdict)} for every locked claim whose verdict differs (or is missing): the
    verdict locked under `numerics` where the lock ran under them, else the one it shows."""
    now = {v.claim.id: v.verdict for v in verdicts}
    found = {}
    for cid, c in lock.claims.items():
        expected = (c.verdict_under(numerics) if numerics else None) or c.verdict
        if now.get(cid) != expected and not (c.fragile and now.get(cid) in c.verdicts.values()):
            found[cid] = (now.get(cid, "missing"), expected)
    return found


def paper_cost(verdicts: list[Verdict], store: Store, registry: Registry, lock: Lock | None = None) -> float | None:
    """CPU seconds of the runs behind a paper's shown verdicts (each run once): the lock's when it is shown, else the
    store's; None when nothing ran or a run's CPU time was not measured."""
    if lock is not None:
        return lock.cpu_s
    keys = {key for v in verdicts if v.verdict not in PENDING for key in claim_keys(v, registry)}
    return runs_cost(store, keys)[1] if keys else None
