"""Planning a reproduction of several papers at once: which cells, in which order, at what expected cost.

`bench reproduce --all` runs the claims of every paper in one grid, so that two papers sharing a cell
(or a cached tiny model) pay for it once and the progress bar's ETA spans every paper:

* `claim_cells` selects the cells of the claims at the wanted scale ("cpu": the cpu-full and
  cpu-reduced claims; "paper": the paper-scale ones; "all").
* `cache_first` orders them so that each cached model is built by one cell before other cells that
  read it start: the cells of the language-model and image families train a tiny model on first use
  (`bench.toolkit.cache.cached_dir`, keyed by the task's settings), and two workers starting two
  cells of the same setting at once would both train it.
* `expected_costs` weighs each cell by the stored wall time of matching runs, so that the ETA is not
  fooled by a few slow cells at the end.
* `cache_build_seconds` reads what the cache builds of this run cost (each build records its own
  seconds next to the model), the share of a reproduction spent training tiny models.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import select

from bench.context import default_cache_root
from bench.errors import BenchError
from bench.models import Run
from bench.registry import Registry
from bench.spec import Cell, canonical_json
from bench.store import Store
from leaderboard.claims import Paper, claim_groups, group_cells

SCALE_CHOICES = {"cpu": ("cpu-full", "cpu-reduced"), "paper": ("paper-scale",),
                 "all": ("cpu-full", "cpu-reduced", "paper-scale")}


def claim_cells(papers: Iterable[Paper], registry: Registry, scale: str, seeds: int | None = None,
                controls: bool = False) -> list[Cell]:
    """The unique cells of every claim at `scale` (cpu, paper or all), in paper and claim order; with
    `controls`, their negative controls' cells too."""
    if scale not in SCALE_CHOICES:
        raise BenchError(f"unknown scale {scale!r}; allowed: {', '.join(SCALE_CHOICES)}")
    wanted = SCALE_CHOICES[scale]
    cells = [cell for paper in papers for claim in paper.claims if claim.scale in wanted
             for group in claim_groups(claim, controls, paper, registry)
             for cell in group_cells(group, registry, seeds or claim.seeds)]
    return list(dict.fromkeys(cells))


def _setting(cell: Cell) -> str:
    return canonical_json({"task": cell.task, "task_config": cell.task_config})


def cache_first(cells: list[Cell]) -> list[Cell]:
    """The same cells, reordered in three waves, each keeping the input order within it:

    1. one cell per task setting (the first one): it builds the setting's seed-independent caches;
    2. one cell per task setting and seed: it builds what a seed adds (a world, a fine-tuned model);
    3. every other cell, which then only reads caches.

    A pool of workers draining this queue never starts two cells that would build the same cache,
    except where a wave-1 cell is still running when the queue reaches its setting's later cells:
    those come in the same order as their leaders, so the earliest-started leaders are met first.
    """
    first_of_setting: dict[str, Cell] = {}
    first_of_seed: dict[tuple[str, int], Cell] = {}
    for cell in cells:
        first_of_setting.setdefault(_setting(cell), cell)
        first_of_seed.setdefault((_setting(cell), cell.seed), cell)
    wave1 = list(first_of_setting.values())
    taken = set(wave1)
    wave2 = [c for c in first_of_seed.values() if c not in taken]
    taken.update(wave2)
    return wave1 + wave2 + [c for c in cells if c not in taken]


def expected_costs(store: Store, cells: list[Cell], default: float = 1.0) -> dict[str, float]:
    """{run_key: expected seconds}: the median stored wall time of the cell itself, else of its setting
    (same method, task and configs, any seed), else of its method on its task, else the median of the
    known estimates (or `default` when nothing matching is stored)."""
    by_key: dict[str, list[float]] = defaultdict(list)
    by_setting: dict[str, list[float]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[float]] = defaultdict(list)
    pairs = {(c.method, c.task) for c in cells}
    methods, tasks = sorted({m for m, _ in pairs}), sorted({t for _, t in pairs})
    query = (select(Run.run_key, Run.setting_key, Run.method, Run.task, Run.wall_s)
             .where(Run.method.in_(methods), Run.task.in_(tasks), Run.status == "done", Run.wall_s.is_not(None)))
    with store.engine.connect() as connection:
        for key, setting, method, task, wall in connection.execute(query):
            by_key[key].append(wall)
            by_setting[setting].append(wall)
            by_pair[(method, task)].append(wall)
    estimates: dict[str, float | None] = {}
    for cell in cells:
        found = by_key.get(cell.run_key) or by_setting.get(cell.setting_key) or by_pair.get((cell.method, cell.task))
        estimates[cell.run_key] = statistics.median(found) if found else None
    known = [v for v in estimates.values() if v is not None]
    fallback = statistics.median(known) if known else default
    return {key: max(value if value is not None else fallback, 1e-3) for key, value in estimates.items()}


def cache_build_seconds(since: float, root: Path | None = None) -> tuple[int, float]:
    """(builds, seconds): the cached models built at or after unix time `since` under `root` (default: this
    machine's cache root, $BENCH_CACHE_DIR or ~/.cache/icml2025-bench, where the local runner's cells cache), and
    the wall seconds their builds took (as each build recorded in its build.json)."""
    root = Path(root).expanduser() if root is not None else default_cache_root()
    builds, seconds = 0, 0.0
    for path in root.glob("**/build.json") if root.is_dir() else ():
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if record.get("finished_at", 0.0) >= since:
            builds += 1
            seconds += float(record.get("seconds", 0.0))
    return builds, seconds
