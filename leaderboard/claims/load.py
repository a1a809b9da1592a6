"""Reading a claims file into a Paper (the schema: leaderboard/claims/model.py): each entry's keys and structure
here, then everything the registry knows (leaderboard/claims/validate.py). Every refusal is one line naming the file
or claim and what is allowed."""

from __future__ import annotations

import yaml

from bench.errors import BenchError
from bench.registry import Registry
from leaderboard.claims.cells import paper_cells
from leaderboard.claims.model import (
    CLAIM_KEYS,
    CPU_SCALES,
    FIDELITIES,
    INTERVALS,
    KINDS,
    SCALES,
    CellGroup,
    Claim,
    Paper,
)
from leaderboard.claims.parsed import read_yaml
from leaderboard.claims.validate import validate_paper

GROUP_KEYS = ("method", "task", "method_config", "task_config", "paper_value")


def load_paper(registry: Registry, slug: str) -> Paper:
    """Read and validate a claims file against the registry (names, metrics, config keys)."""
    path = registry.paper_path(slug)
    try:
        data = read_yaml(path)  # parsed once per state of the file (claims.parsed)
    except yaml.YAMLError as exc:
        raise BenchError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("claims", []), list):
        raise BenchError(f"{path}: expected a mapping with title, methods and a list of claims")
    sections = {role: data.get(f"{role}s") or [] for role in ("claim", "control", "check")}
    if not all(isinstance(c, dict) for entries in sections.values() for c in entries):
        raise BenchError(f"{path}: every claim, control and check must be a mapping "
                         "with id, kind, metric, cells, expect")
    methods = data.get("methods") or {}
    for name, info in methods.items():
        registry.listing("method", name)
        if (info or {}).get("fidelity") not in FIDELITIES:
            raise BenchError(f"{path}: method {name} needs fidelity, one of {', '.join(FIDELITIES)}")
    defaults = data.get("defaults") or {}
    _known_keys(defaults, f"{path}: defaults")
    claims, controls, checks = ([_claim(c, defaults, role) for c in sections[role]]
                                for role in ("claim", "control", "check"))
    paper = Paper(slug, data.get("title", slug), list(data.get("authors") or []), data.get("venue", ""),
                  data.get("arxiv"), data.get("code"), methods, [*controls, *claims, *checks])
    validate_paper(paper, registry, path)
    return paper


def _known_keys(raw: dict, where: str) -> None:
    unknown = sorted(set(raw) - set(CLAIM_KEYS))
    if unknown:
        raise BenchError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(CLAIM_KEYS)} "
                         "(a tolerance is a key of expect)")


def _group(raw: dict, claim_id: str) -> CellGroup:
    if not isinstance(raw, dict) or not {"method", "task"} <= set(raw) or set(raw) - set(GROUP_KEYS):
        raise BenchError(f"claim {claim_id!r}: each cell needs method and task "
                         f"(allowed keys: {', '.join(sorted(GROUP_KEYS))})")
    return CellGroup(raw["method"], raw["task"], dict(raw.get("method_config") or {}),
                     dict(raw.get("task_config") or {}), raw.get("paper_value"))


def _claim(raw: dict, defaults: dict, role: str = "claim") -> Claim:
    cid = raw.get("id", "?")
    _known_keys(raw, f"{role} {cid!r}")
    merged = {**defaults, **raw}
    gates = _gates(raw, merged, role, cid)
    kind = merged.get("kind")
    if kind not in KINDS:
        raise BenchError(f"claim {cid!r}: kind {kind!r} unknown; allowed: {', '.join(KINDS)}")
    if merged.get("scale") not in SCALES:
        raise BenchError(f"claim {cid!r}: scale {merged.get('scale')!r} unknown; allowed: {', '.join(SCALES)}")
    cells = merged.get("cells")
    cells = [cells] if isinstance(cells, dict) else cells
    if not cells:
        raise BenchError(f"claim {cid!r}: needs cells")
    control, control_why, control_none = _negative_control(raw, role, cid)
    x_range = merged.get("x_range")
    return Claim(
        id=cid, statement=merged.get("statement", ""), kind=kind, metric=merged.get("metric", ""),
        groups=tuple(_group(c, cid) for c in cells), expect=dict(merged.get("expect") or {}),
        seeds=int(merged.get("seeds", 1)), scale=merged["scale"], source=merged.get("source", ""),
        paper_value=merged.get("paper_value"), approximate=bool(merged.get("approximate", False)),
        differences=merged.get("differences", ""), curve=merged.get("curve"),
        x_range=tuple(float(x) for x in x_range) if x_range else None, x_metric=merged.get("x_metric"),
        role=role, gates=gates, why=str(raw.get("why") or ""),
        control=control, control_why=control_why, control_none=control_none, fragile=str(raw.get("fragile") or ""),
        interval=_interval(merged, cid), deterministic=str(merged.get("deterministic") or "").strip(),
        no_harm=_no_harm(raw, role, cid), switches=_switch_names(raw, cid), axis=str(merged.get("axis", "loglog")),
    )


def _gates(raw: dict, merged: dict, role: str, cid: str) -> tuple[str, ...]:
    """A control's `gates` (the claims measured in its world), and a check's `why`, each only where it belongs."""
    gates = merged.get("gates") or []
    if role == "control" and (not isinstance(gates, list) or not gates or not all(isinstance(g, str) for g in gates)):
        raise BenchError(f"control {cid!r}: needs gates, the list of the claim ids measured in its world")
    if role != "control" and "gates" in raw:
        raise BenchError(f"{role} {cid!r}: gates belongs to a control (the file's controls: list)")
    if (role == "check") != bool(raw.get("why")):
        raise BenchError(f"{role} {cid!r}: " + ("a check needs why: the reason it holds by construction"
                                                if role == "check"
                                                else "why belongs to a check (the file's checks: list)"))
    return tuple(gates) if role == "control" else ()


def _switch_names(raw: dict, cid: str) -> tuple[str, ...] | None:
    """`switches: [names]`: an ablation claim about one part of a method is judged switched off by the switches that
    remove that part only ([] when its own cells already ablate it); absent, by every switch of its credited
    methods."""
    if "switches" not in raw:
        return None
    names = raw["switches"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise BenchError(f"claim {cid!r}: switches must be a list of switch names (bench list methods shows them)")
    return tuple(names)


def _interval(merged: dict, cid: str) -> str:
    interval = merged.get("interval", "t")
    if interval not in INTERVALS:
        raise BenchError(f"claim {cid!r}: interval {interval!r} unknown; allowed: {', '.join(INTERVALS)}")
    return interval


def _no_harm(raw: dict, role: str, cid: str) -> bool:
    """`no_harm: true`, only on a claim: a non-inferiority claim about a side effect (accuracy kept, preservation
    kept), shown in its own section and never counted among the reproduced effects."""
    value = raw.get("no_harm", False)
    if not isinstance(value, bool):
        raise BenchError(f"claim {cid!r}: no_harm must be true or false, got {value!r}")
    if value and role != "claim":
        raise BenchError(f"{role} {cid!r}: no_harm belongs to a claim (a side effect the paper says it avoids)")
    return value


def _negative_control(raw: dict, role: str, cid: str) -> tuple[tuple[CellGroup, ...], str, str]:
    """A claim's `control: {why, cells}` or `control_none: reason` (never both; never on a check). A positive control
    may have a `control:` too, its null: a positive control that also passes on its null cannot show the effect."""
    control, none = raw.get("control"), raw.get("control_none")
    if control is None and none is None:
        return (), "", ""
    if role == "check" or (role == "control" and none is not None):
        raise BenchError(f"{role} {cid!r}: control_none belongs to a claim, and a check has no control "
                         "(a positive control may name its null in control:)")
    if control is not None and none is not None:
        raise BenchError(f"claim {cid!r}: give control (the cells where the claim must fail) or control_none "
                         "(why there are none), not both")
    if none is not None:
        if not isinstance(none, str) or not none.strip():
            raise BenchError(f"claim {cid!r}: control_none must say why no control setting exists")
        return (), "", none.strip()
    if not isinstance(control, dict) or set(control) != {"why", "cells"} or not str(control["why"] or "").strip():
        raise BenchError(f"claim {cid!r}: control needs exactly why (what it removes) "
                         "and cells (where the claim must fail)")
    cells = control["cells"]
    cells = [cells] if isinstance(cells, dict) else cells
    if not cells:
        raise BenchError(f"claim {cid!r}: control needs cells")
    return tuple(_group(c, cid) for c in cells), str(control["why"]).strip(), ""


def uncontrolled(paper: Paper) -> list[str]:
    """The CPU-scale claims with neither a negative control nor a reason there can be none."""
    return [c.id for c in paper.claims
            if c.role == "claim" and c.scale in CPU_SCALES and not c.control and not c.control_none]


def check_all(registry: Registry) -> list[tuple[str, str | None]]:
    """(slug, error or None) for every claims file: names, metrics and config keys validated, and every CPU-scale
    claim able to fail (a negative control, or control_none saying why there is none)."""
    results = []
    for slug in registry.papers():
        try:
            paper = load_paper(registry, slug)
            paper_cells(paper, registry, 1)  # the Configs' own value checks too
            missing = uncontrolled(paper)
            if missing:
                raise BenchError(f"CPU-scale claim(s) without a negative control or control_none: {', '.join(missing)}")
            results.append((slug, None))
        except BenchError as exc:
            results.append((slug, str(exc)))
    return results
