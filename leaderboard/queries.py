"""Every aggregation the CLI and the app show, as plain functions over the store."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import func, select

from bench.configs import config_dict
from bench.errors import BenchError
from bench.models import MetricValue, Run
from bench.registry import Registry
from bench.store import Store


@dataclass(frozen=True)
class Summary:
    """Mean, std and 95% CI of one metric over seeds."""

    n: int
    mean: float
    std: float
    ci_low: float
    ci_high: float


def summarize(values: list[float] | np.ndarray) -> Summary:
    """Student-t 95% interval over seeds (n=1: a point, std 0)."""
    from scipy.special import stdtrit  # scipy.stats costs a second to import; this is the t quantile

    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("no values to summarize")
    mean = float(x.mean())
    if n == 1:
        return Summary(1, mean, 0.0, mean, mean)
    std = float(x.std(ddof=1))
    half = float(stdtrit(n - 1, 0.975)) * std / math.sqrt(n)
    return Summary(n, mean, std, mean - half, mean + half)


def config_label(config: dict[str, Any], defaults: dict[str, Any]) -> str:
    """The fields that differ from the defaults, as k=v (empty: the paper's defaults)."""
    diffs = [f"{k}={v}" for k, v in sorted(config.items()) if defaults.get(k, object()) != v]
    return ", ".join(diffs)


def defaults_of(registry: Registry, kind: str, name: str) -> dict[str, Any]:
    try:
        entry = registry.method(name) if kind == "method" else registry.task(name)
    except BenchError:
        return {}
    return config_dict(entry.Config())


@dataclass(frozen=True)
class StatusRow:
    task: str
    method: str
    status: str
    n: int


def status_counts(store: Store, failures: int = 10) -> tuple[list[StatusRow], list[Any]]:
    """Run counts per (task, method, status), and the latest failed or timed-out runs."""
    query = (select(Run.task, Run.method, Run.status, func.count()).group_by(Run.task, Run.method, Run.status)
             .order_by(Run.task, Run.method, Run.status))
    latest = (select(Run).where(Run.status.in_(("failed", "timeout"))).order_by(Run.id.desc()).limit(failures))
    with store.engine.connect() as connection:
        rows = [StatusRow(*r) for r in connection.execute(query)]
        return rows, list(connection.execute(latest))


@dataclass(frozen=True)
class BoardRow:
    task: str
    task_label: str
    method: str
    config_label: str
    hardware: str
    metric: str
    higher_is_better: bool
    n: int
    mean: float
    std: float
    ci_low: float
    ci_high: float


def metric_values(store: Store, task: str | None = None, metric: str | None = None) -> list[Any]:
    """(task, task_config, method, method_config, hardware, seed, name, value) of done runs."""
    query = (select(Run.task, Run.task_config, Run.method, Run.method_config, Run.hardware, Run.seed,
                    MetricValue.name, MetricValue.value)
             .join(MetricValue, MetricValue.run_key == Run.run_key).where(Run.status == "done"))
    if task is not None:
        query = query.where(Run.task == task)
    if metric is not None:
        query = query.where(MetricValue.name == metric)
    with store.engine.connect() as connection:
        return list(connection.execute(query))


def leaderboard_rows(store: Store, registry: Registry, task: str | None = None) -> dict[tuple[str, str], list[BoardRow]]:
    """Per (task instance, primary metric): methods ranked best first, with mean/std/CI over seeds."""
    groups: dict[tuple, list[float]] = {}
    for row in metric_values(store, task=task):
        try:
            family = registry.family(registry.listing("task", row.task).family)
        except BenchError:
            continue  # a task no longer registered: nothing to rank it by
        if row.name != family.primary_metric:
            continue
        key = (row.task, json.dumps(row.task_config, sort_keys=True), row.method,
               json.dumps(row.method_config, sort_keys=True), row.hardware, row.name)
        groups.setdefault(key, []).append(row.value)
    board: dict[tuple[str, str], list[BoardRow]] = {}
    for (task_name, task_cfg, method, method_cfg, hardware, metric), values in groups.items():
        family = registry.family(registry.listing("task", task_name).family)
        task_label = config_label(json.loads(task_cfg), defaults_of(registry, "task", task_name))
        s = summarize(values)
        higher = family.metrics[metric].higher_is_better
        row = BoardRow(task_name, task_label, method,
                       config_label(json.loads(method_cfg), defaults_of(registry, "method", method)),
                       hardware, metric, higher, s.n, s.mean, s.std, s.ci_low, s.ci_high)
        title = task_name + (f" [{task_label}]" if task_label else "")
        board.setdefault((title, metric), []).append(row)
    for rows in board.values():
        rows.sort(key=lambda r: -r.mean if r.higher_is_better else r.mean)
    return dict(sorted(board.items()))
