"""The numbers papers report for a task's methods, drawn beside our bars on the task page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from bench.errors import BenchError
from bench.registry import Registry
from leaderboard.claims.cells import group_cells
from leaderboard.claims.load import load_paper
from leaderboard.claims.parsed import read_yaml_naming
from leaderboard.queries import config_label, defaults_of


@dataclass(frozen=True)
class Marker:
    """A number a paper reports for a method on a task (drawn beside our bar)."""

    paper: str
    claim: str
    method: str
    task_config: dict[str, Any]  # the full config of the task instance the value is for
    metric: str
    value: float
    approximate: bool
    method_label: str = ""       # the method's config where it differs from its defaults (as the task page's rows)


def paper_markers(registry: Registry, task: str) -> list[Marker]:
    """Every paper value (value claims, per-cell paper values) reported on `task`."""
    markers = []
    for slug in registry.papers():
        try:
            data = read_yaml_naming(registry.paper_path(slug), [task])
            if data is None or not _names_task(data, task):
                continue  # no cell on the task: no marker, so the paper is neither built nor validated
            paper = load_paper(registry, slug)
        except yaml.YAMLError:
            continue  # as load_paper's BenchError: reported on the paper's page
        except BenchError:
            continue  # a broken claims file is reported on the paper's page, not here
        for claim in paper.claims:
            for group in claim.groups:
                value = group.paper_value if group.paper_value is not None else (
                    claim.paper_value if claim.kind == "value" else None)
                if group.task == task and value is not None:
                    cell = group_cells(group, registry, 1)[0]
                    markers.append(Marker(slug, claim.id, group.method, dict(cell.task_config), claim.metric,
                                          float(value), claim.approximate,
                                          config_label(dict(cell.method_config),
                                                       defaults_of(registry, "method", group.method))))
    return markers


def _names_task(data: Any, task: str) -> bool:
    """Whether any mapping of a parsed claims file has `task: <task>`: every cell group is such a mapping (its
    defaults too), so a file without one has no cell on the task. The nineteen files were each built and validated
    against the registry for the task page, though one or two have cells on a given task (a fifth of the page)."""
    if isinstance(data, dict):
        return data.get("task") == task or any(_names_task(value, task) for value in data.values())
    if isinstance(data, list):
        return any(_names_task(value, task) for value in data)
    return False
