"""A claim with its credited methods switched off (bench/switches.py): the same criterion on the cells where each
method the paper introduces runs without its mechanism. A claim that still holds there is uninformative
(leaderboard/claims/evaluate.py)."""

from __future__ import annotations

from dataclasses import replace

from bench.registry import Registry
from bench.switches import Switch
from leaderboard.claims.model import CellGroup, Claim, Paper


def credited_switches(paper: Paper, registry: Registry) -> dict[str, tuple[Switch, ...]]:
    """{method: its switches} for the paper's methods that declare a setting removing their mechanism."""
    out = {}
    for name in paper.methods:
        declared = registry.switched_off(name)
        if isinstance(declared, tuple):
            out[name] = declared
    return out


def switched_claims(claim: Claim, paper: Paper, registry: Registry) -> list[tuple[Switch, Claim]]:
    """The claim judged with each credited method replaced by each of its switches (every group of that method at
    once), as (switch, claim) pairs; none for a no-harm claim, whose side effect holds trivially switched off."""
    if claim.role != "claim" or claim.no_harm:
        return []
    out = []
    for method, switches in credited_switches(paper, registry).items():
        if not any(g.method == method for g in claim.groups):
            continue
        for switch in switches:
            if claim.switches is not None and switch.name not in claim.switches:
                continue
            groups = tuple(_switch_group(g, switch, registry) if g.method == method else g for g in claim.groups)
            out.append((switch, replace(claim, id=f"{claim.id} (switched off: {method} {switch.name})", groups=groups,
                                        role="switched off", control=(), differences="")))
    return out


def _switch_group(group: CellGroup, switch: Switch, registry: Registry) -> CellGroup:
    """The group with its method switched off: the switch's config over the group's own settings (those the
    replacing method also has)."""
    if switch.method == group.method:
        config = {**group.method_config, **switch.config}
    else:
        fields = registry.config_fields("method", switch.method)
        config = {**{k: v for k, v in group.method_config.items() if k in fields}, **switch.config}
    return replace(group, method=switch.method, method_config=config, paper_value=None)
