"""Cells: expand a grid (methods x tasks x seeds x hardware, from flags or YAML) into runnable cells (the core's, used
by the CLI, the runners and the claims).

Incompatible (method, task, hardware) combinations are dropped with the reason, not run.
A grid file looks like:

    methods: [dicesgd, {name: pcsgd, config: {c: 0.5}}]
    tasks: [performative, {name: performative, config: {beta: 0.05}}]
    seeds: 0-9            # or a list, or one integer
    hardware: [cpu]
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.configs import DuplicateKey, build_config, config_dict, field_types, load_yaml, parse_overrides
from bench.errors import BenchError
from bench.registry import Registry
from bench.spec import Cell, validate_hardware


@dataclass(frozen=True)
class Entry:
    """A method or task name with config overrides (typed values)."""

    name: str
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Grid:
    cells: list[Cell]
    incompatible: list[tuple[str, str, str, str]]  # (method, task, hardware, reason)


MAX_SEED = 2**31 - 1  # runs.seed is a 32-bit integer on PostgreSQL
MAX_CELLS = 100_000  # cells in one grid unless --max-cells raises it: counted before any cell is built
_DIGITS = re.compile(r"[0-9]+")  # ASCII decimal: not "٣", "1_0" or " 0x10"
MAX_SEEDS = 10_000  # seeds in one command: more is a typo (0-99999999999), not an experiment
_SEEDS_HELP = f"use integers in 0-{MAX_SEED}, a range such as 0-9, or a list such as 0,3,5 (at most {MAX_SEEDS} seeds)"


def check_seed(seed: int) -> int:
    """One seed, in range for every store: 0 <= seed < 2**31."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise BenchError(f"bad seed {seed!r}: {_SEEDS_HELP}")
    return seed


def parse_seeds(text: str | int | list) -> list[int]:
    """'0-9' -> 0..9, '0,3,5' -> [0, 3, 5], 7 -> [7]; checked (range, count) before any list is built."""
    if isinstance(text, list):
        if not text:
            raise BenchError(f"bad seeds []: {_SEEDS_HELP}")
        seeds = sorted({s for part in text for s in parse_seeds(part)})
    elif isinstance(text, int) and not isinstance(text, bool):
        seeds = [check_seed(text)]
    else:
        if not isinstance(text, str):
            raise BenchError(f"bad seeds {text!r}: {_SEEDS_HELP}")
        found: set[int] = set()
        for part in text.split(","):
            lo_text, dash, hi_text = part.strip().partition("-")
            if not _DIGITS.fullmatch(lo_text.strip()) or (dash and not _DIGITS.fullmatch(hi_text.strip())):
                raise BenchError(f"bad seeds {text!r}: {_SEEDS_HELP}")
            lo = int(lo_text)
            hi = int(hi_text) if dash else lo
            if not 0 <= lo <= hi <= MAX_SEED:
                raise BenchError(f"bad seeds {text!r}: {_SEEDS_HELP}")
            if hi - lo + 1 + len(found) > MAX_SEEDS:  # before the range is listed
                raise BenchError(f"too many seeds in {text!r}: at most {MAX_SEEDS} in one command")
            found.update(range(lo, hi + 1))
        seeds = sorted(found)
    if len(seeds) > MAX_SEEDS:
        raise BenchError(f"too many seeds ({len(seeds)}): at most {MAX_SEEDS} in one command")
    return seeds


def make_cell(registry: Registry, method: Entry, task: Entry, seed: int, hardware: str = "cpu") -> Cell:
    """A cell with the full configs (the paper's defaults with the overrides applied)."""
    m, t = registry.method(method.name), registry.task(task.name)
    try:
        validate_hardware(hardware)
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    method_config = config_dict(build_config(m.Config, method.config, m.name))
    task_config = config_dict(build_config(t.Config, task.config, t.name))
    return Cell(m.name, t.name, int(seed), method_config, task_config, hardware)


def _unique(registry: Registry, kind: str, entries: list[Entry]) -> list[tuple[Entry, dict[str, Any]]]:
    """Each distinct entry once, with its full config (the defaults with its overrides): the same name and overrides
    listed 400,000 times is built once, and two entries that come to the same full config are one."""
    seen: dict[str, None] = {}
    out: dict[str, tuple[Entry, dict[str, Any]]] = {}
    for entry in entries:
        raw = f"{entry.name}\0{json.dumps(entry.config, sort_keys=True, default=repr)}"
        if raw in seen:
            continue
        seen[raw] = None
        item = registry.method(entry.name) if kind == "method" else registry.task(entry.name)
        full = config_dict(build_config(item.Config, entry.config, item.name))
        out.setdefault(f"{item.name}\0{json.dumps(full, sort_keys=True)}", (Entry(item.name, entry.config), full))
    return list(out.values())


def unavailable(registry: Registry, task: str, task_config: Mapping[str, Any]) -> str | None:
    """Why this machine cannot build `task` at `task_config` (data the project does not ship and that is not here:
    the task's `unavailable` hook), or None."""
    item = registry.task(task)
    return item.unavailable(build_config(item.Config, task_config, item.name))


def expand(registry: Registry, methods: list[Entry], tasks: list[Entry], seeds: list[int],
           hardware: list[str], max_cells: int | None = MAX_CELLS) -> Grid:
    """The grid's cells, duplicates removed before any is built; more than `max_cells` (None: no cap) is refused
    before any is built, counting the distinct compatible cells."""
    for hw in hardware:
        try:
            validate_hardware(hw)
        except ValueError as exc:
            raise BenchError(str(exc)) from None
    unique_methods, unique_tasks = _unique(registry, "method", methods), _unique(registry, "task", tasks)
    for t, t_config in unique_tasks:
        reason = unavailable(registry, t.name, t_config)
        if reason:
            raise BenchError(f"task {t.name} cannot be built on this machine: {reason}")
    seeds, hardware = list(dict.fromkeys(int(s) for s in seeds)), list(dict.fromkeys(hardware))
    pairs, incompatible = [], []
    for (m, m_config), (t, t_config), hw in itertools.product(unique_methods, unique_tasks, hardware):
        reason = registry.incompatibility(m.name, t.name, hw)
        if reason:
            incompatible.append((m.name, t.name, hw, reason))
        else:
            pairs.append((m.name, m_config, t.name, t_config, hw))
    total = len(pairs) * len(seeds)
    if max_cells is not None and total > max_cells:
        raise BenchError(f"the grid has {total:,} cells ({len(unique_methods)} methods x {len(unique_tasks)} tasks x "
                         f"{len(hardware)} hardware x {len(seeds)} seeds, compatible and distinct), more than the cap "
                         f"of {max_cells:,}: split it, or raise the cap with --max-cells")
    cells = [Cell(m, t, seed, dict(m_config), dict(t_config), hw) for m, m_config, t, t_config, hw in pairs
             for seed in seeds]
    return Grid(cells, list(dict.fromkeys(incompatible)))


def entry_from_flag(registry: Registry, kind: str, name: str, raw_overrides: Mapping[str, str],
                    tasks: Sequence[str] = ()) -> Entry:
    """An Entry from a CLI name and raw `--set` text (typed against the Config). For a method, `tasks` are the
    command's tasks: a bare key the method lacks but one of them has is refused naming `--set task.<key>=...`."""
    config_cls = (registry.method(name) if kind == "method" else registry.task(name)).Config
    elsewhere = {}
    if kind == "method" and any(key not in field_types(config_cls) for key in raw_overrides):
        for task_name in tasks:
            try:
                elsewhere[task_name] = list(registry.config_fields("task", task_name))
            except BenchError:      # an unknown task: its own error comes when its entry is built
                continue
    return Entry(name, parse_overrides(config_cls, raw_overrides, name, elsewhere))


def _entries(items: Any, key: str) -> list[Entry]:
    if isinstance(items, (str, dict)):
        items = [items]
    if not isinstance(items, list) or not items:
        raise BenchError(f"grid file: '{key}' must be a name or a list of names / {{name, config}} entries")
    entries = []
    for item in items:
        if isinstance(item, str):
            entries.append(Entry(item))
        elif isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("config", {}), dict):
            unknown = set(item) - {"name", "config"}
            if unknown:
                raise BenchError(f"grid file: {key} entry {item['name']!r} has unknown fields {sorted(unknown)}; "
                                 "allowed: name, config")
            entries.append(Entry(item["name"], item.get("config", {})))
        else:
            raise BenchError(f"grid file: bad {key} entry {item!r}; use a name or {{name: ..., config: {{...}}}}")
    return entries


def load_grid_file(path: Path) -> dict[str, Any]:
    """methods, tasks, seeds, hardware from a YAML grid file (validated shapes, names unchecked)."""
    try:
        data = load_yaml(Path(path).read_bytes().decode("utf-8"))
    except OSError as exc:
        raise BenchError(f"cannot read grid file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise BenchError(f"grid file {path} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except DuplicateKey as exc:
        raise BenchError(f"grid file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise BenchError(f"grid file {path} is not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise BenchError(f"grid file {path} nests too deeply to be a grid") from None
    if not isinstance(data, dict):
        raise BenchError(f"grid file {path}: expected a mapping with methods, tasks, seeds, hardware")
    unknown = set(data) - {"methods", "tasks", "seeds", "hardware"}
    if unknown:
        raise BenchError(f"grid file {path}: unknown keys {sorted(unknown)}; allowed: methods, tasks, seeds, hardware")
    return {
        "methods": _entries(data.get("methods"), "methods"),
        "tasks": _entries(data.get("tasks"), "tasks"),
        "seeds": parse_seeds(data.get("seeds", 0)),
        "hardware": check_hardware(data.get("hardware", ["cpu"]), f"grid file {path}: hardware"),
    }


def check_hardware(hardware: Any, where: str = "hardware") -> list[str]:
    """A hardware name or a non-empty list of them, each cpu, cuda or cuda:<class>."""
    items = [hardware] if isinstance(hardware, str) else hardware
    if not isinstance(items, list) or not items or not all(isinstance(h, str) for h in items):
        raise BenchError(f"{where} must be a name or a list of names (cpu, cuda, cuda:<gpu class>), not {hardware!r}")
    for item in items:
        try:
            validate_hardware(item)
        except ValueError as exc:
            raise BenchError(str(exc)) from None
    return list(dict.fromkeys(items))
