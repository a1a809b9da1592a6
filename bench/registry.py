"""Registration and discovery of methods, tasks and papers.

A method is a module `methods/<family>/<name>.py` whose `solve` carries `@method(...)`; a task is
`tasks/<family>/<name>.py` whose `build` carries `@task(...)`. The file stem is the name.
Third-party packages add modules through the entry-point groups `bench.methods` and
`bench.tasks` (entry-point name = registered name, value = module path).

Discovery reads the modules' source text without importing them, so `bench list` stays fast
however heavy a family's imports are; a module is imported when its method or task is used.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import re
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from bench.errors import BenchError
from bench.spec import Resources

KINDS = ("method", "task")
ENTRY_POINT_GROUPS = {"method": "bench.methods", "task": "bench.tasks"}
_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class MethodSpec:
    family: str
    config: type
    hardware: tuple[str, ...] = ("cpu",)
    resources: Resources = Resources()
    skip: Callable[[Any, Any], str | None] | None = None


@dataclass(frozen=True)
class TaskSpec:
    family: str
    config: type
    version: int = 1


def method(*, family: str, config: type, hardware: tuple[str, ...] = ("cpu",),
           resources: Resources = Resources(), skip: Callable | None = None) -> Callable:
    """Mark `solve(problem, config, ctx) -> Result` as a registered method of `family`."""

    def mark(solve: Callable) -> Callable:
        solve.__bench_method__ = MethodSpec(family, config, tuple(hardware), resources, skip)
        return solve

    return mark


def task(*, family: str, config: type, version: int = 1) -> Callable:
    """Mark `build(config, ctx) -> Problem` as a registered task of `family`."""

    def mark(build: Callable) -> Callable:
        build.__bench_task__ = TaskSpec(family, config, version)
        return build

    return mark


@dataclass(frozen=True)
class Listing:
    """What discovery knows without importing: kind, name, family, module, one-line summary."""

    kind: str
    name: str
    family: str
    module: str
    summary: str
    origin: str  # "builtin" or the plugin's distribution name


@dataclass(frozen=True)
class Method:
    name: str
    module: str
    spec: MethodSpec
    solve: Callable

    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def Config(self) -> type:  # noqa: N802 - mirrors the module's class name
        return self.spec.config

    def skip(self, problem: Any, config: Any) -> str | None:
        return self.spec.skip(problem, config) if self.spec.skip else None


@dataclass(frozen=True)
class Task:
    name: str
    module: str
    spec: TaskSpec
    build: Callable

    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def Config(self) -> type:  # noqa: N802
        return self.spec.config

    @property
    def version(self) -> int:
        return self.spec.version


@dataclass(frozen=True)
class Family:
    """A problem contract: Problem and Result types, METRICS, score(), optional trace()."""

    name: str
    module: ModuleType

    @property
    def metrics(self) -> dict:
        return self.module.METRICS

    @property
    def metric_prefixes(self) -> dict:
        """Metrics declared by name prefix (`METRIC_PREFIXES`), for families whose scores come from an
        external suite whose names are only known at run time (lm-evaluation-harness tasks)."""
        return getattr(self.module, "METRIC_PREFIXES", {})

    def metric(self, name: str):
        """The declared Metric of `name` (exact, else by prefix), or None when the family does not declare it."""
        if name in self.metrics:
            return self.metrics[name]
        return next((m for prefix, m in self.metric_prefixes.items() if name.startswith(prefix)), None)

    @property
    def primary_metric(self) -> str:
        return next(name for name, m in self.metrics.items() if m.primary)

    def score(self, problem: Any, result: Any) -> dict[str, float]:
        return self.module.score(problem, result)

    def trace(self, problem: Any, result: Any) -> dict[str, list[tuple[int, float]]]:
        trace = getattr(self.module, "trace", None)
        return trace(problem, result) if trace else {}


_DECORATOR = {kind: re.compile(rf"^@(?:\w+\.)?{kind}\((?P<args>[^)]*)\)", re.MULTILINE) for kind in KINDS}
_FAMILY_ARG = re.compile(r"\bfamily\s*=\s*(['\"])(?P<family>\w+)\1")
_DOCSTRING = re.compile(r'\A(?:\s*#[^\n]*\n)*\s*[rRuU]?("""|\'\'\')\s*(?P<first>[^\n]*)')


def _decorator_family(path: Path, kind: str) -> tuple[str, str] | None:
    """(family, summary) from a module's `@method(family=...)` / `@task(family=...)` line.

    Read from the source text, never imported: a pattern over the decorator (the convention is
    a literal family="..." keyword), ten times cheaper than parsing the module.
    """
    source = path.read_text(encoding="utf-8")
    decorator = _DECORATOR[kind].search(source)
    if decorator is None:
        return None
    family = _FAMILY_ARG.search(decorator.group("args"))
    if family is None:
        raise BenchError(f"{path}: @{kind}(...) needs a literal family='...'")
    doc = _DOCSTRING.match(source)
    summary = doc.group("first").strip().rstrip('"').rstrip("'").strip() if doc else ""
    return family.group("family"), summary


def _builtin_listings(kind: str, root: Path) -> list[Listing]:
    package = "methods" if kind == "method" else "tasks"
    listings = []
    for path in sorted((root / package).glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        found = _decorator_family(path, kind)
        if found is None:
            continue
        family, summary = found
        if family != path.parent.name:
            raise BenchError(f"{path}: declares family {family!r} but lives in {package}/{path.parent.name}/")
        module = f"{package}.{path.parent.name}.{path.stem}"
        listings.append(Listing(kind, path.stem, family, module, summary, "builtin"))
    return listings


def _plugin_listings(kind: str) -> list[Listing]:
    listings = []
    for ep in entry_points(group=ENTRY_POINT_GROUPS[kind]):
        spec = importlib.util.find_spec(ep.value)
        if spec is None or spec.origin is None:
            raise BenchError(f"plugin {kind} {ep.name!r}: module {ep.value!r} cannot be found")
        found = _decorator_family(Path(spec.origin), kind)
        if found is None:
            raise BenchError(f"plugin {kind} {ep.name!r}: {ep.value} has no @{kind}(...) function")
        dist = ep.dist.name if ep.dist is not None else "plugin"
        listings.append(Listing(kind, ep.name, found[0], ep.value, found[1], dist))
    return listings


def closest(name: str, choices: list[str]) -> str:
    matches = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    return f"; did you mean {', '.join(matches)}?" if matches else ""


@dataclass
class Registry:
    """All methods and tasks; built by `discover()`, imported lazily on lookup."""

    listings: list[Listing]
    papers_dir: Path = _ROOT / "leaderboard" / "papers"
    _loaded: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        seen: dict[tuple[str, str], Listing] = {}
        for item in self.listings:
            key = (item.kind, item.name)
            if key in seen:
                raise BenchError(
                    f"duplicate {item.kind} name {item.name!r}: {seen[key].module} ({seen[key].origin}) "
                    f"and {item.module} ({item.origin}); names must be unique"
                )
            seen[key] = item
        self._by_key = seen

    @classmethod
    def discover(cls, plugins: bool = True, root: Path = _ROOT) -> "Registry":
        listings = []
        for kind in KINDS:
            listings += _builtin_listings(kind, root)
            if plugins:
                listings += _plugin_listings(kind)
        return cls(listings)

    def names(self, kind: str) -> list[str]:
        return sorted(name for (k, name) in self._by_key if k == kind)

    def listing(self, kind: str, name: str) -> Listing:
        try:
            return self._by_key[(kind, name)]
        except KeyError:
            known = self.names(kind)
            raise BenchError(
                f"unknown {kind} {name!r}{closest(name, known)} (known: {', '.join(known) or 'none'})"
            ) from None

    def method(self, name: str) -> Method:
        return self._load("method", name)

    def task(self, name: str) -> Task:
        return self._load("task", name)

    def family(self, name: str) -> Family:
        key = ("family", name)
        if key not in self._loaded:
            task_modules = [item.module for item in self.listings if item.kind == "task" and item.family == name]
            package = task_modules[0].rsplit(".", 1)[0] if task_modules else f"tasks.{name}"
            try:
                self._loaded[key] = Family(name, importlib.import_module(package))
            except ModuleNotFoundError:
                raise BenchError(f"family {name!r} has no contract module {package}") from None
        return self._loaded[key]

    def _load(self, kind: str, name: str) -> Any:
        key = (kind, name)
        if key not in self._loaded:
            item = self.listing(kind, name)
            module = importlib.import_module(item.module)
            attr = "__bench_method__" if kind == "method" else "__bench_task__"
            fns = [v for v in vars(module).values() if callable(v) and hasattr(v, attr)]
            if len(fns) != 1:
                raise BenchError(f"{item.module} must define exactly one @{kind} function, found {len(fns)}")
            spec = getattr(fns[0], attr)
            wrapper = Method if kind == "method" else Task
            self._loaded[key] = wrapper(name, item.module, spec, fns[0])
        return self._loaded[key]

    def incompatibility(self, method_name: str, task_name: str, hardware: str = "cpu") -> str | None:
        """Why this method cannot run this task on this hardware, or None."""
        m, t = self.listing("method", method_name), self.listing("task", task_name)
        if m.family != t.family:
            return f"{method_name} solves {m.family} problems, {task_name} is a {t.family} task"
        supported = self.method(method_name).spec.hardware
        if hardware.split(":", 1)[0] not in supported and hardware not in supported:
            return f"{method_name} runs on {', '.join(supported)}, not {hardware}"
        return None

    @cached_property
    def paper_paths(self) -> dict[str, Path]:
        return {p.stem: p for p in sorted(self.papers_dir.glob("*.yaml"))}

    def papers(self) -> list[str]:
        return list(self.paper_paths)

    def paper_path(self, slug: str) -> Path:
        if slug not in self.paper_paths:
            known = self.papers()
            raise BenchError(f"unknown paper {slug!r}{closest(slug, known)} (known: {', '.join(known) or 'none'})")
        return self.paper_paths[slug]
