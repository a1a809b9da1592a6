"""The cells a claim needs: each cell group over its seeds, with its negative control's and its switched-off cells."""

from __future__ import annotations

from bench.cells import Entry, make_cell
from bench.registry import Registry
from bench.spec import Cell
from leaderboard.claims.model import CellGroup, Claim, Paper
from leaderboard.claims.switched import switched_claims


def group_cells(group: CellGroup, registry: Registry, seeds: int, check: bool = False) -> list[Cell]:
    """The cells of one claim group: seeds 0..seeds-1 with the full configs.

    The configs are read from the modules' source (Registry.full_config), so the leaderboard never imports
    a method or task; `check` builds them through the Configs themselves (make_cell), which also runs
    their value checks, for the cells about to be run and for `bench claims --check`.
    """
    if check:
        return [make_cell(registry, Entry(group.method, group.method_config), Entry(group.task, group.task_config), s)
                for s in range(seeds)]
    method_config = registry.full_config("method", group.method, group.method_config)
    task_config = registry.full_config("task", group.task, group.task_config)
    return [Cell(group.method, group.task, s, dict(method_config), dict(task_config)) for s in range(seeds)]


def claim_groups(claim: Claim, controls: bool = False, paper: Paper | None = None,
                 registry: Registry | None = None) -> tuple[CellGroup, ...]:
    """A claim's cell groups; with `controls`, its negative control's too, and (given its paper and the registry)
    those of the claim with each credited method switched off."""
    if not controls:
        return claim.groups
    switched = [g for _, c in switched_claims(claim, paper, registry) for g in c.groups] if paper and registry else []
    return (*claim.groups, *claim.control, *switched)


def paper_cells(paper: Paper, registry: Registry, seeds: int | None = None, controls: bool = True) -> list[Cell]:
    """Every cell the paper's claims (and, by default, their negative controls) need: unique, in claim order,
    built and checked by the Configs."""
    cells = [c for claim in paper.claims for g in claim_groups(claim, controls, paper, registry)
             for c in group_cells(g, registry, seeds or claim.seeds, check=True)]
    return list(dict.fromkeys(cells))
