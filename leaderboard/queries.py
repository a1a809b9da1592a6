"""Every aggregation the CLI and the app show, as plain functions over the store.

Filters always reach SQL as bound parameters (SQLAlchemy expressions), never as text. What they need
from the registry (Config defaults, a family's metrics) is read from the modules' source, so no query
imports a method or task module.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Select, func, select

from bench.errors import BenchError
from bench.models import CurvePoint, Environment, MetricValue, Run
from bench.registry import Registry
from bench.spec import Metric
from bench.store import Store

SKEW_FOR_BOOTSTRAP = 1.0  # |sample skewness| above this: percentile bootstrap ...
BOOTSTRAP_SEEDS = range(5, 200)  # ... for this many seeds (from 200 on, the t interval's CLT is fine)
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class Summary:
    """Mean, std and 95% CI of one metric over seeds; `ci_method` says how the CI was made."""

    n: int
    mean: float
    std: float
    ci_low: float
    ci_high: float
    ci_method: str = "t"


def skewness(x: np.ndarray) -> float:
    """Sample skewness g1 (0 for fewer than 3 values or no spread)."""
    if len(x) < 3 or np.std(x) == 0:
        return 0.0
    centred = x - x.mean()
    return float(np.mean(centred**3) / np.mean(centred**2) ** 1.5)


def outside(low: float, high: float, bounds: tuple[float | None, float | None] | None) -> bool:
    """An interval that leaves a metric's declared range (Metric.bounds)."""
    if bounds is None:
        return False
    lo, hi = bounds
    return (lo is not None and low < lo) or (hi is not None and high > hi)


def summarize(values: Iterable[float], bounds: tuple[float | None, float | None] | None = None) -> Summary:
    """Student-t 95% interval over seeds; a percentile bootstrap when the values are skewed, or when the t interval
    leaves the metric's declared range (an accuracy's [0.984, 1.001]): the bootstrap's interval lies within the
    values' own range. Below 5 seeds, where a bootstrap is too coarse, such an interval is clipped to the range.

    n = 1 gives a point with std 0. The bootstrap is seeded, so the same values always give
    the same interval.
    """
    from scipy.special import stdtrit  # scipy.stats costs a second to import; this is the t quantile

    x = np.asarray(list(values), dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("no values to summarize")
    mean = float(x.mean())
    if n == 1:
        return Summary(1, mean, 0.0, mean, mean, "point")
    std = float(x.std(ddof=1))
    half = float(stdtrit(n - 1, 0.975)) * std / math.sqrt(n)
    leaves = outside(mean - half, mean + half, bounds)
    if n in BOOTSTRAP_SEEDS and (abs(skewness(x)) > SKEW_FOR_BOOTSTRAP or leaves):
        rng = np.random.default_rng(0)
        means = x[rng.integers(n, size=(BOOTSTRAP_RESAMPLES, n))].mean(axis=1)
        low, high = np.quantile(means, [0.025, 0.975])
        return Summary(n, mean, std, float(low), float(high), "bootstrap")
    if leaves:
        lo, hi = bounds
        return Summary(n, mean, std, max(mean - half, lo if lo is not None else -math.inf),
                       min(mean + half, hi if hi is not None else math.inf), "t, clipped to range")
    return Summary(n, mean, std, mean - half, mean + half, "t")


def config_label(config: dict[str, Any], defaults: dict[str, Any]) -> str:
    """The fields that differ from the defaults, as k=v (empty: the paper's defaults)."""
    diffs = [f"{k}={v}" for k, v in sorted(config.items()) if defaults.get(k, object()) != v]
    return ", ".join(diffs)


def defaults_of(registry: Registry, kind: str, name: str) -> dict[str, Any]:
    """`config_dict(Config())` of a method or task, read without importing it; {} when it is no longer registered."""
    try:
        return registry.config_defaults(kind, name)
    except BenchError:
        return {}


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
    ci_method: str
    setting_key: str = ""
    task_config: str = "{}"  # canonical JSON of the full task config
    scale: str = "cpu-scale"  # "paper-scale" where a config names a hub model
    method_config: str = "{}"  # canonical JSON of the full method config
    group: str = ""  # the shared settings of its comparison group where the instance has several ("T=2000")
    rank: int | None = None  # within its group; None: a reference, a single seed (never ranked)
    tied: bool = False  # its 95 % CI overlaps that of the first row of its rank: the same rank
    low_seeds: bool = False  # fewer than MIN_SEEDS seeds, or fewer than the instance's largest setting
    most_seeds: int = 0  # the largest n of the task instance and metric, across groups
    reference: str = ""  # why the method is a reference (never ranked), empty for a competing method
    registered: bool = True  # False: the method's file is gone (shown, with a note)


def summary_from_sums(n: int, s1: float, s2: float, s3: float,
                      bounds: tuple[float | None, float | None] | None = None) -> Summary | None:
    """The t interval from Σx, Σx², Σx³ (what SQL aggregates); None when the values are skewed enough, or the
    interval leaves the metric's range, so that the caller must fetch them (see `summarize`)."""
    from scipy.special import stdtrit

    mean = s1 / n
    if n == 1:
        return Summary(1, mean, 0.0, mean, mean, "point")
    m2 = max(s2 / n - mean**2, 0.0)  # central moments from raw ones
    m3 = s3 / n - 3 * mean * s2 / n + 2 * mean**3
    if n in BOOTSTRAP_SEEDS and m2 > 0 and abs(m3 / m2**1.5) > SKEW_FOR_BOOTSTRAP:
        return None
    std = math.sqrt(m2 * n / (n - 1))
    half = float(stdtrit(n - 1, 0.975)) * std / math.sqrt(n)
    if outside(mean - half, mean + half, bounds):
        return None
    return Summary(n, mean, std, mean - half, mean + half, "t")


ALL_METRICS = "all"


def _metrics(connection, registry: Registry, task: str, wanted: Iterable[str] | None) -> list[tuple[str, Metric]]:
    """The metrics to rank `task` by: the family's primary one (wanted None), every declared metric its runs
    stored ("all"), or the names given (a name the family does not declare is an error naming the allowed)."""
    try:
        family = registry.declared_metrics(registry.listing("task", task).family)
    except BenchError:
        return []  # a task no longer registered: nothing to rank it by
    if wanted is None:
        return [(family.primary_metric, family.metrics[family.primary_metric])]
    wanted = list(wanted)
    if ALL_METRICS in wanted:
        stored = connection.execute(select(MetricValue.name).join(Run, MetricValue.run_key == Run.run_key)
                                    .where(Run.task == task, Run.status == "done").distinct()).scalars()
        return [(name, family.metric(name)) for name in sorted(stored) if family.metric(name) is not None]
    unknown = [name for name in wanted if family.metric(name) is None]
    if unknown:
        allowed = [*family.metrics, *(f"{prefix}*" for prefix in family.metric_prefixes), ALL_METRICS]
        raise BenchError(f"unknown metric(s) {', '.join(unknown)} for task {task}; allowed: {', '.join(allowed)}")
    return [(name, family.metric(name)) for name in wanted]


def looks_like_hub_id(value: Any) -> bool:
    """A config value naming a Hugging Face hub model ("org/name"), not a path on this machine."""
    return (isinstance(value, str) and value.count("/") == 1 and not value.startswith((".", "/", "~"))
            and all(part and " " not in part for part in value.split("/")) and not Path(value).exists())


def scale_of(method_config: dict[str, Any], task_config: dict[str, Any]) -> str:
    """"paper-scale" where a config names a hub model (the paper's setting), else "cpu-scale" (our down-scaling)."""
    hub = any(looks_like_hub_id(v) for v in (*method_config.values(), *task_config.values()))
    return "paper-scale" if hub else "cpu-scale"


def _setting_stats(connection, task: str, metric: str, hardware: str | None, min_seeds: int) -> list[Any]:
    """Per setting (method x configs x hardware) of `task`: n, Σx, Σx², Σx³ of `metric` over done seeds."""
    return list(connection.execute(setting_stats_query(task, metric, hardware, min_seeds)))


def setting_stats_query(task: str, metric: str, hardware: str | None, min_seeds: int) -> Select:
    """The aggregation `_setting_stats` runs: the runs read in group order from the index ix_runs_board alone
    (migration 0008), each one's value by the metrics' (run_key, name) index."""
    value = MetricValue.value
    query = (select(Run.setting_key, Run.method, Run.hardware, func.count(), func.sum(value), func.sum(value * value),
                    func.sum(value * value * value), func.min(Run.run_key))
             .join(MetricValue, MetricValue.run_key == Run.run_key)
             .where(Run.task == task, Run.status == "done", MetricValue.name == metric)
             .group_by(Run.setting_key, Run.method, Run.hardware)
             .having(func.count() >= min_seeds))
    if hardware is not None:
        query = query.where(Run.hardware == hardware)
    return query


def _setting_values(connection, setting: str, metric: str) -> list[float]:
    # the status is filtered here, not in SQL: given both, SQLite's planner reads every done run through
    # ix_runs_status (nearly every row of a store: 20 ms a setting at 100k runs) instead of the setting's index
    query = (select(MetricValue.value, Run.status).join(Run, MetricValue.run_key == Run.run_key)
             .where(Run.setting_key == setting, MetricValue.name == metric))
    return [value for value, status in connection.execute(query) if status == "done"]


MIN_SEEDS = 3  # a setting with fewer seeds is marked low-seed


def shared_fields(registry: Registry, task: str) -> tuple[str, ...]:
    """The method-config fields that every method of the task's family declares (the performative family's horizon
    T, noise sigma, privacy epsilon and delta): runs that differ in one are different experiments, never ranked
    together. Read from the registry, so a group does not change as runs of another method are stored."""
    try:
        family = registry.listing("task", task).family
    except BenchError:
        return ()
    fields: set[str] | None = None
    for name in registry.names("method"):
        if registry.listing("method", name).family == family:
            own = set(defaults_of(registry, "method", name))
            fields = own if fields is None else fields & own
    return tuple(sorted(fields or ()))


def _reference(registry: Registry, method: str) -> tuple[str, bool]:
    """(why `method` is a reference or "", whether it is registered): a method no longer registered is no error."""
    try:
        return registry.reference(method), True
    except BenchError:
        return "", False


def rank_rows(rows: list[BoardRow]) -> list[BoardRow]:
    """One comparison group's rows, best first, ranked: references and single seeds get no rank; a row whose 95 % CI
    overlaps that of the first row of the current rank is tied and shares its rank (competition ranking: 1, 1, 3)."""
    out: list[BoardRow] = []
    leader = -1  # index in `out` of the first row of the current rank
    placed = 0
    for r in rows:
        if r.reference or r.n < 2:
            out.append(replace(r, rank=None, tied=False))
            continue
        placed += 1
        first = out[leader] if leader >= 0 else None
        if first is not None and r.ci_low <= first.ci_high and first.ci_low <= r.ci_high:
            out[leader] = replace(first, tied=True)
            out.append(replace(r, rank=first.rank, tied=True))
        else:
            leader = len(out)
            out.append(replace(r, rank=placed, tied=False))
    return out


def _grouped(rows: list[BoardRow], fields: tuple[str, ...]) -> dict[str, list[BoardRow]]:
    """A task instance's rows split by their values of the shared method-config fields; each group labelled by the
    fields whose values differ between the groups ("" when there is one group), its rows ranked best first, every
    row marked low-seed where it has fewer than MIN_SEEDS seeds or fewer than the instance's largest setting."""
    keys = [tuple(json.dumps(json.loads(r.method_config).get(f), sort_keys=True) for f in fields) for r in rows]
    varying = [i for i, _ in enumerate(fields) if len({k[i] for k in keys}) > 1]
    most = max(r.n for r in rows)
    groups: dict[str, list[BoardRow]] = {}
    for key, r in zip(keys, rows, strict=True):
        label = ", ".join(f"{fields[i]}={json.loads(key[i])}" for i in varying)
        groups.setdefault(label, []).append(replace(r, group=label, most_seeds=most,
                                                    low_seeds=r.n < MIN_SEEDS or r.n < most))
    for label, members in groups.items():
        members.sort(key=lambda r: -r.mean if r.higher_is_better else r.mean)
        groups[label] = rank_rows(members)
    return groups


def leaderboard_rows(store: Store, registry: Registry, task: str | None = None, hardware: str | None = None,
                     min_seeds: int = 1, metrics: Iterable[str] | None = None
                     ) -> dict[tuple[str, str], list[BoardRow]]:
    """Per (task instance and comparison group, metric): methods ranked best first, with mean/std/CI over seeds.
    `metrics`: None for the family's primary metric, names, or "all" (every declared metric the task's runs stored).

    Like is ranked with like: a task instance (its full task config) is split into groups by the method-config
    fields its family's methods share (`shared_fields`: a horizon T), each group its own key ("performative · T=2000")
    and its own ranking (`rank_rows`: ties share a rank); low-seed settings are marked (`_grouped`).

    Aggregated in SQL by setting (GROUP BY setting_key); only skewed settings, and intervals that leave the
    metric's declared range, fetch their values.
    """
    board: dict[tuple[str, str], list[BoardRow]] = {}
    with store.engine.connect() as connection:
        tasks = [task] if task is not None else list(connection.execute(select(Run.task).distinct()).scalars())
        for task_name in tasks:
            for metric, declared in _metrics(connection, registry, task_name, metrics):
                stats = _setting_stats(connection, task_name, metric, hardware, min_seeds)
                if not stats:
                    continue
                configs = {r.run_key: r for r in connection.execute(
                    select(Run.run_key, Run.method_config, Run.task_config)
                    .where(Run.run_key.in_([s[7] for s in stats])))}
                task_defaults = defaults_of(registry, "task", task_name)
                fields = shared_fields(registry, task_name)
                instances: dict[str, list[BoardRow]] = {}
                for setting, method, hw, n, s1, s2, s3, example in stats:
                    summary = (summary_from_sums(n, s1, s2, s3, declared.bounds)
                               or summarize(_setting_values(connection, setting, metric), declared.bounds))
                    method_config, task_config = configs[example].method_config, configs[example].task_config
                    task_label = config_label(task_config, task_defaults)
                    row = BoardRow(task_name, task_label, method,
                                   config_label(method_config, defaults_of(registry, "method", method)),
                                   hw, metric, declared.higher_is_better, summary.n, summary.mean, summary.std,
                                   summary.ci_low, summary.ci_high, summary.ci_method, setting,
                                   json.dumps(task_config, sort_keys=True), scale_of(method_config, task_config),
                                   json.dumps(method_config, sort_keys=True))
                    why, known = _reference(registry, method)
                    row = replace(row, reference=why, registered=known)
                    instances.setdefault(task_name + (f" [{task_label}]" if task_label else ""), []).append(row)
                for title, rows in instances.items():
                    for label, members in _grouped(rows, fields).items():
                        board[(title + (f" · {label}" if label else ""), metric)] = members
    return dict(sorted(board.items()))


def stored_names(store: Store, kind: str) -> list[str]:
    """The methods or tasks (kind "method" or "task") the store has runs of, registered or not."""
    column = Run.method if kind == "method" else Run.task
    with store.engine.connect() as connection:
        return sorted(connection.execute(select(column).distinct()).scalars())


def hardware_kinds(store: Store) -> list[str]:
    with store.engine.connect() as connection:
        return sorted(connection.execute(select(Run.hardware).distinct()).scalars())


def curves(store: Store, run_keys: Iterable[str], name: str) -> tuple[np.ndarray, np.ndarray]:
    """(steps, values (runs, steps)) of a curve, on the steps every run recorded; runs in key order."""
    keys = list(run_keys)
    query = (select(CurvePoint.run_key, CurvePoint.step, CurvePoint.value)
             .where(CurvePoint.run_key.in_(keys), CurvePoint.name == name))
    per_run: dict[str, dict[int, float]] = {}
    with store.engine.connect() as connection:
        for key, step, value in connection.execute(query):
            per_run.setdefault(key, {})[int(step)] = float(value)
    if not per_run:
        return np.array([]), np.empty((0, 0))
    steps = sorted(set.intersection(*(set(c) for c in per_run.values())))
    return np.array(steps), np.array([[per_run[k][s] for s in steps] for k in keys if k in per_run])


def mean_curve(store: Store, run_keys: Iterable[str], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(steps, mean, std) of a curve over runs, on the steps every run recorded."""
    steps, values = curves(store, run_keys, name)
    if not len(steps):
        return np.array([]), np.array([]), np.array([])
    return steps, values.mean(axis=0), values.std(axis=0)


def curve_names(store: Store, run_keys: Iterable[str]) -> list[str]:
    keys = list(run_keys)
    with store.engine.connect() as connection:
        return sorted(connection.execute(select(CurvePoint.name).where(CurvePoint.run_key.in_(keys))
                                         .distinct()).scalars())


RUN_COLUMNS = ("run_key", "method", "task", "seed", "hardware", "status", "wall_s", "finished_at", "runner")


def _filtered(query, method: str | None, task: str | None, status: str | None, hardware: str | None):
    for column, value in ((Run.method, method), (Run.task, task), (Run.status, status), (Run.hardware, hardware)):
        if value is not None:
            query = query.where(column == value)
    return query


def runs_table(store: Store, method: str | None = None, task: str | None = None, status: str | None = None,
               hardware: str | None = None, limit: int = 1000, offset: int = 0) -> list[dict[str, Any]]:
    """The newest runs matching the filters (a page of `limit` from `offset`), as plain dicts (explorer, CSV)."""
    query = _filtered(select(*(getattr(Run, c) for c in RUN_COLUMNS), Run.method_config, Run.task_config),
                      method, task, status, hardware).order_by(Run.id.desc())
    with store.engine.connect() as connection:
        rows = connection.execute(query.limit(limit).offset(offset)).mappings().all()
    return [dict(r) for r in rows]


def runs_count(store: Store, method: str | None = None, task: str | None = None, status: str | None = None,
               hardware: str | None = None) -> int:
    """How many runs match the filters (the explorer's "N of M")."""
    with store.engine.connect() as connection:
        return int(connection.execute(_filtered(select(func.count()).select_from(Run), method, task, status,
                                                hardware)).scalar_one())


def tasks_with_runs(store: Store) -> list[str]:
    """The tasks with at least one finished run, by name: each stored task (from the task index) whose runs include a
    done one. Not `WHERE status = 'done'` in SQL: SQLite then reads every done run through ix_runs_status (100k at
    100k runs, each task page and every filter change), where a task's own runs are read until the first done."""
    with store.engine.connect() as connection:
        tasks = list(connection.execute(select(Run.task).distinct()).scalars())
        return sorted(task for task in tasks if _has_done(connection, task))


def _has_done(connection, task: str) -> bool:
    result = connection.execute(select(Run.status).where(Run.task == task))
    try:
        return any(status == "done" for status in result.scalars())
    finally:
        result.close()  # the rest of the task's runs unread


def find_run_keys(store: Store, prefix: str, limit: int = 10) -> list[str]:
    """The stored run_keys that start with `prefix` (at most `limit`)."""
    with store.engine.connect() as connection:
        return list(connection.execute(select(Run.run_key).where(Run.run_key.startswith(prefix, autoescape=True))
                                       .limit(limit)).scalars())


def run_detail(store: Store, run_key: str) -> dict[str, Any] | None:
    """One run with its metrics and the environment it ran in."""
    with store.engine.connect() as connection:
        run = connection.execute(select(Run).where(Run.run_key == run_key)).mappings().first()
        if run is None:
            return None
        environment = None
        if run["environment_id"] is not None:
            environment = connection.execute(
                select(Environment).where(Environment.id == run["environment_id"])).mappings().first()
        metrics = {r.name: r.value
                   for r in connection.execute(select(MetricValue).where(MetricValue.run_key == run_key))}
    return {"run": dict(run), "metrics": metrics, "environment": dict(environment) if environment else None}


@dataclass(frozen=True)
class Completeness:
    total: int
    done: int
    failed: int
    other: int  # timeout, skipped, infeasible, ...
    missing: int

    @property
    def fraction_done(self) -> float:
        return self.done / self.total if self.total else 1.0


def completeness(store: Store, run_keys: Iterable[str]) -> Completeness:
    """How much of a grid (its cells' run_keys) is stored, by status."""
    keys = list(dict.fromkeys(run_keys))
    statuses: dict[str, str] = {}
    with store.engine.connect() as connection:
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            statuses.update(connection.execute(select(Run.run_key, Run.status).where(Run.run_key.in_(chunk))).all())
    counts = {"done": 0, "failed": 0}
    for status in statuses.values():
        counts[status if status in counts else "other"] = counts.get(status if status in counts else "other", 0) + 1
    return Completeness(len(keys), counts["done"], counts["failed"], counts.get("other", 0), len(keys) - len(statuses))
