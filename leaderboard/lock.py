"""Making a verdict lock: a paper's judged verdicts, with the interval each rests on and what its runs cost, at the
commit, date and machine of the run and under the fingerprint of its float numerics (bench/numerics.py: every cell on
one thread). The file itself, written and read and shown as the reference run: leaderboard/claims/reference.py.

`bench reproduce --all --controls --lock` (or `bench reproduce SLUG --lock` for one paper) writes one file per paper.
A lock holds each claim's verdict under two numerics: the machine's own (kernels pinned at AVX2) and
`ATEN_CPU_CAPABILITY=default` (`bench reproduce ... --lock --numerics default` adds them to the locks). A claim whose
verdict differs between the two is fragile: rounding decides it, so it is shown as underpowered, never as reproduced
or not reproduced.
The slow tier reproduces every paper from a fresh store and compares with these files, so a verdict that
changes is a diff in review, never a silent re-pin.
"""

from __future__ import annotations

import math
import os
import platform
from dataclasses import replace
from datetime import date

from bench.errors import BenchError
from bench.numerics import fingerprint
from bench.provenance import cpu_model, git_state, package_versions
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims.cells import claim_groups
from leaderboard.claims.cost import claim_keys, runs_cost
from leaderboard.claims.model import Paper
from leaderboard.claims.reference import (  # noqa: F401 - some re-exported: the CLI and the app read them here
    EVIDENCE_FIELDS,
    FRAGILE,
    LOCK_COMMAND,
    LOCK_DIR,
    Lock,
    LockedClaim,
    read_lock,
    with_reference,
    write_lock,
)
from leaderboard.claims.verdict import Verdict
from leaderboard.inputs import ROOT, closure, digest


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


def paper_inputs(paper: Paper, registry: Registry) -> str:
    """The digest of what a paper's verdicts depend on (leaderboard/inputs.py): its claims file, constraints.txt,
    and the code of the import closure of its methods and tasks (claims, controls and switched-off cells). The lock
    test compares a paper whose digest changed since its lock on every run."""
    groups = [g for c in paper.claims for g in claim_groups(c, True, paper, registry)]
    modules = ({registry.listing("method", g.method).module for g in groups}
               | {registry.listing("task", g.task).module for g in groups})
    return digest(closure(modules) | {registry.paper_path(paper.slug), ROOT / "constraints.txt"})


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
    """`lock` (its numbers kept) with `other`'s verdicts (the same claims under other numerics: ATen's scalar kernels,
    or another machine's): a claim whose verdicts differ anywhere is shown as FRAGILE."""
    claims = {}
    for cid, c in lock.claims.items():
        verdicts = {**c.verdicts}
        if cid in other.claims:
            verdicts.update(other.claims[cid].verdicts)
        shown = c.verdicts.get(lock.numerics, c.verdict) if len(set(verdicts.values())) <= 1 else FRAGILE
        claims[cid] = replace(c, verdict=shown, verdicts=verdicts)
    return replace(lock, claims=claims, other_numerics=other.numerics)


def lock_to_write(existing: Lock | None, made: Lock, second_numerics: bool) -> Lock:
    """What `bench reproduce --lock` writes, from the lock on disk and the one this run `made`. Under the second
    numerics (--numerics default) the run's verdicts are added to the existing lock. Under the pinned ones, a lock
    whose inputs are unchanged but which another machine made (another vendor's pinned fingerprint, e.g. AMD's
    eece09d528e6 beside Intel's da2511b176e6) keeps its numbers and gains this machine's verdicts, so that it holds
    both machines' answers; a lock whose inputs changed is replaced."""
    if second_numerics:
        if existing is None:
            raise BenchError(f"{made.slug} has no lock under the pinned numerics to add these verdicts to: "
                             f"run `{made.command}` first")
        return merge_numerics(existing, made)
    if existing is not None and existing.inputs == made.inputs and existing.numerics != made.numerics:
        return merge_numerics(existing, made)
    return made


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
