"""Registration and discovery of methods, tasks and papers.

A method is a module `methods/<family>/<name>.py` whose `solve` carries `@method(...)`; a task is
`tasks/<family>/<name>.py` whose `build` carries `@task(...)`. The file stem is the name.
Third-party packages add modules through the entry-point groups `bench.methods` and
`bench.tasks` (entry-point name = registered name, value = module path).

Discovery reads the modules' source text without importing them, so `bench list` stays fast
however heavy a family's imports are; a module is imported when its method or task is used.
What the leaderboard needs besides (Config fields and defaults, a method's hardware, a family's
declared metrics) is read from the source too (bench.static), so showing a store never imports a
method or task module either; a value the static reader cannot compute is taken from the imported
module instead.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import static
from bench.configs import coerce, field_types, type_name
from bench.errors import BenchError
from bench.spec import Metric, Resources
from bench.switches import Switch, parse_switches

_log = logging.getLogger(__name__)

KINDS = ("method", "task")
ENTRY_POINT_GROUPS = {"method": "bench.methods", "task": "bench.tasks"}
_ROOT = Path(__file__).resolve().parent.parent
_STATIC_LOCK = threading.RLock()


@dataclass(frozen=True)
class MethodSpec:
    family: str
    config: type
    hardware: tuple[str, ...] = ("cpu",)
    resources: Resources = Resources()
    skip: Callable[[Any, Any], str | None] | None = None
    accepts: tuple[type, ...] = ()  # the problem types it solves (empty: every problem of its family)
    smoke: Mapping[str, Any] = field(default_factory=dict, hash=False)  # a short run's overrides (conformance)
    reference: str = ""  # why it is a yardstick (exact answer, the generator's truth), never ranked among methods


@dataclass(frozen=True)
class TaskSpec:
    family: str
    config: type
    version: int = 1
    problem: type | None = None  # the problem type it builds (None: its family has one)
    smallest: Mapping[str, Any] = field(default_factory=dict, hash=False)  # the smallest instance's overrides
    unavailable: Callable[[Any], str | None] | None = None  # why a config cannot be built on this machine, or None


NO_RESOURCES = Resources()  # frozen: one default shared by every method that declares none


def method(*, family: str, config: type, hardware: tuple[str, ...] = ("cpu",), resources: Resources = NO_RESOURCES,
           skip: Callable | None = None, accepts: type | tuple[type, ...] = (),
           smoke: Mapping[str, Any] | None = None, reference: str = "") -> Callable:
    """Mark `solve(problem, config, ctx) -> Result` as a registered method of `family`.

    `accepts`: the problem types it solves, in a family with several (written as names of the family's contract,
    e.g. `accepts=(PreferenceProblem, BanditPreferenceProblem)`): a task that builds another is refused before it is
    built (Registry.incompatibility reads both declarations from the source). `smoke`: config overrides for a short
    run, which the conformance suite runs on every compatible task's smallest instance. `reference`: why the method
    is a yardstick rather than a competitor (it computes the exact answer, or reads the generator's truth, as a
    positive control does); the leaderboard labels it and never ranks it among the methods."""

    def mark(solve: Callable) -> Callable:
        kinds = accepts if isinstance(accepts, tuple) else (accepts,)
        solve.__bench_method__ = MethodSpec(family, config, tuple(hardware), resources, skip, kinds, dict(smoke or {}),
                                            reference)
        return solve

    return mark


def task(*, family: str, config: type, version: int = 1, problem: type | None = None,
         smallest: Mapping[str, Any] | None = None, unavailable: Callable | None = None) -> Callable:
    """Mark `build(config, ctx) -> Problem` as a registered task of `family`; `problem`: the type it builds, in a
    family with several; `smallest`: config overrides for its smallest instance (the conformance suite's);
    `unavailable(config)`: why this machine cannot build that config (data the project does not ship and that is not
    here), or None: planners leave such cells out and say why instead of storing failed runs."""

    def mark(build: Callable) -> Callable:
        build.__bench_task__ = TaskSpec(family, config, version, problem, dict(smallest or {}), unavailable)
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
        if self.spec.accepts and not isinstance(problem, self.spec.accepts):  # refused earlier; a plugin's task may lie
            names = " or ".join(kind.__name__ for kind in self.spec.accepts)
            return f"{self.name} takes {names} instances, not {type(problem).__name__}"
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

    def unavailable(self, config: Any) -> str | None:
        """Why `config` (the task's Config) cannot be built on this machine, or None."""
        return self.spec.unavailable(config) if self.spec.unavailable else None


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

    def metric(self, name: str) -> Metric | None:
        """The declared Metric of `name` (exact, else by prefix), or None when the family does not declare it."""
        return _declared(self.metrics, self.metric_prefixes, name)

    @property
    def primary_metric(self) -> str:
        return next(name for name, m in self.metrics.items() if m.primary)

    def score(self, problem: Any, result: Any) -> dict[str, float]:
        return self.module.score(problem, result)

    def trace(self, problem: Any, result: Any) -> dict[str, list[tuple[int, float]]]:
        trace = getattr(self.module, "trace", None)
        return trace(problem, result) if trace else {}


@dataclass(frozen=True)
class Metrics:
    """A family's declared metrics (its METRICS and METRIC_PREFIXES) without the family's code."""

    family: str
    metrics: dict[str, Metric]
    metric_prefixes: dict[str, Metric]

    def metric(self, name: str) -> Metric | None:
        return _declared(self.metrics, self.metric_prefixes, name)

    @property
    def primary_metric(self) -> str:
        return next(name for name, m in self.metrics.items() if m.primary)


def _declared(metrics: dict, prefixes: dict, name: str) -> Metric | None:
    if name in metrics:
        return metrics[name]
    return next((m for prefix, m in prefixes.items() if name.startswith(prefix)), None)


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
    _static: dict[tuple, Any] = field(default_factory=dict, repr=False)

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
    def discover(cls, plugins: bool = True, root: Path = _ROOT) -> Registry:
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

    def _family_package(self, name: str) -> str:
        task_modules = [item.module for item in self.listings if item.kind == "task" and item.family == name]
        return task_modules[0].rsplit(".", 1)[0] if task_modules else f"tasks.{name}"

    def family(self, name: str) -> Family:
        key = ("family", name)
        if key not in self._loaded:
            package = self._family_package(name)
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
        accepts, builds = self.problem_types("method", method_name), self.problem_types("task", task_name)
        if accepts and builds and not set(builds) & set(accepts):
            return f"{method_name} takes {' or '.join(accepts)} problems, {task_name} builds {builds[0]}"
        supported = self.hardware(method_name)
        if hardware.split(":", 1)[0] not in supported and hardware not in supported:
            return f"{method_name} runs on {', '.join(supported)}, not {hardware}"
        return None

    def problem_types(self, kind: str, name: str) -> tuple[str, ...]:
        """The names of the problem types a method accepts (`accepts=`) or a task builds (`problem=`), empty when
        not declared; read from the source (bench.static) unless the module is already imported."""
        self.listing(kind, name)

        def imported() -> tuple[str, ...]:
            spec = self._load(kind, name).spec
            return tuple(k.__name__ for k in (spec.accepts if kind == "method" else (spec.problem,) if spec.problem
                                              else ()))

        read = imported if (kind, name) in self._loaded else lambda: self.read_problem_types(kind, name)
        return self._read(("problem_types", kind, name), read, imported)

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

    # What the leaderboard needs, read from the source text (bench.static) -------------------------------
    #
    # Each falls back to the imported module when it is already imported (exact, and free) or when
    # the static reader cannot compute the value (a default made by a function call, a name bound in
    # an `if`, ...; bench.static lists what it reads): the reader says so by raising static.NotStatic, the only
    # exception that falls back (logged at INFO); any other is a bug of the reader and surfaces.
    # tests/bench/test_registry.py checks that both
    # ways agree for every registered method, task and family.

    @cached_property
    def _reader(self) -> static.Reader:
        packages = {item.module.split(".")[0] for item in self.listings} - {"methods", "tasks"}
        return static.Reader(static.locate_in(_ROOT, packages))

    def _read(self, key: tuple, read: Callable[[], Any], imported: Callable[[], Any]) -> Any:
        with _STATIC_LOCK:  # the app's sessions share one registry; the reader's caches are not thread-safe
            if key not in self._static:
                try:
                    self._static[key] = read()
                except static.NotStatic as exc:  # anything else is a bug of the reader: it surfaces
                    _log.info("%s read by importing its module: %s", " ".join(map(str, key)), exc)
                    self._static[key] = imported()
            return self._static[key]

    def config_fields(self, kind: str, name: str) -> dict[str, static.Field]:
        """The fields of a method's or task's Config in declaration order: type and default of each."""
        self.listing(kind, name)

        def imported() -> dict[str, static.Field]:
            return _fields_of(self._load(kind, name).Config)

        read = imported if (kind, name) in self._loaded else lambda: self.read_config_fields(kind, name)
        return self._read(("config", kind, name), read, imported)

    def config_defaults(self, kind: str, name: str) -> dict[str, Any]:
        """`config_dict(Config())` of a method or task (tuples as lists), without importing its module."""
        return {k: list(f.default) if isinstance(f.default, tuple) else f.default
                for k, f in self.config_fields(kind, name).items()}

    def full_config(self, kind: str, name: str, values: dict[str, Any]) -> dict[str, Any]:
        """`config_dict(build_config(Config, values))` without importing the module: the defaults with `values`
        applied, unknown keys and wrong types refused with build_config's errors. The Config's own value
        checks (its __post_init__) do not run here; they run when a cell is built to be run (bench.cells)."""
        fields = self.config_fields(kind, name)
        out = {k: f.default for k, f in fields.items()}
        for key, value in values.items():
            if key not in fields:
                valid = ", ".join(f"{k}: {type_name(f.type)}" for k, f in fields.items())
                raise BenchError(f"unknown config key {key!r} for {name}; valid keys: {valid}")
            try:
                out[key] = coerce(fields[key].type, value)
            except TypeError as exc:
                raise BenchError(f"{name}.{key}: {exc}") from None
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}

    def hardware(self, method_name: str) -> tuple[str, ...]:
        """The hardware kinds a method declares (`@method(hardware=...)`)."""
        self.listing("method", method_name)
        if ("method", method_name) in self._loaded:
            return self.method(method_name).spec.hardware
        return self._read(("hardware", method_name), lambda: self.read_hardware(method_name),
                          lambda: self.method(method_name).spec.hardware)

    def reference(self, method_name: str) -> str:
        """Why a method is a reference (`@method(reference=...)`), empty for a competing method; read from source."""
        self.listing("method", method_name)
        if ("method", method_name) in self._loaded:
            return self.method(method_name).spec.reference
        return self._read(("reference", method_name), lambda: self.read_reference(method_name),
                          lambda: self.method(method_name).spec.reference)

    def switched_off(self, method_name: str) -> tuple[Switch, ...] | str:
        """The method's SWITCHED_OFF (bench/switches.py): its switches, or the reason it has none; read from source.
        A method that declares neither is a one-line error naming the file to fix."""
        item = self.listing("method", method_name)

        def imported() -> Any:
            return getattr(importlib.import_module(item.module), "SWITCHED_OFF", None)

        def read() -> Any:
            source = self._reader.source(item.module)
            if not source.has("SWITCHED_OFF"):
                raise static.NotStatic(f"{item.module}: no plain SWITCHED_OFF")
            return source.lookup("SWITCHED_OFF")

        declared = self._read(("switched_off", method_name), read, imported)
        if declared is None:
            raise BenchError(f"method {method_name} ({item.module}) declares no SWITCHED_OFF: map switch names to "
                             "the settings that remove its mechanism, or give the reason there is none "
                             "(bench/switches.py)")
        return parse_switches(method_name, declared)

    def declared_metrics(self, family: str) -> Metrics:
        """A family's METRICS and METRIC_PREFIXES, without importing its contract module."""
        loaded = self._loaded.get(("family", family))
        if loaded is not None:
            return Metrics(family, loaded.metrics, loaded.metric_prefixes)

        def imported() -> Metrics:
            contract = self.family(family)
            return Metrics(family, contract.metrics, contract.metric_prefixes)

        return self._read(("metrics", family), lambda: self.read_metrics(family), imported)

    # the static reads themselves; each raises static.NotStatic when the source does not tell

    def read_config_fields(self, kind: str, name: str) -> dict[str, static.Field]:
        module = self.listing(kind, name).module
        config = self._reader.registered(module, kind)["config"].value()
        if not isinstance(config, static.ClassRef):
            raise static.NotStatic(f"{module}: config= is not a class of the repository")
        return static.dataclass_fields(config)

    def task_version(self, task_name: str) -> int:
        """The version a task declares (`@task(version=...)`), without importing its module."""
        self.listing("task", task_name)
        if ("task", task_name) in self._loaded:
            return self.task(task_name).version
        return self._read(("version", task_name), lambda: self.read_task_version(task_name),
                          lambda: self.task(task_name).version)

    def task_versions(self, cells) -> dict[str, int]:
        """{run_key: its task's version now} for cells: a run stored under another version is stale."""
        versions = {name: self.task_version(name) for name in {cell.task for cell in cells}}
        return {cell.run_key: versions[cell.task] for cell in cells}

    def read_task_version(self, task_name: str) -> int:
        module = self.listing("task", task_name).module
        given = self._reader.registered(module, "task").get("version")
        value = given.value() if given is not None else TaskSpec.__dataclass_fields__["version"].default
        if not isinstance(value, int) or isinstance(value, bool):
            raise static.NotStatic(f"{module}: version is not an integer literal")
        return value

    def read_hardware(self, method_name: str) -> tuple[str, ...]:
        module = self.listing("method", method_name).module
        given = self._reader.registered(module, "method").get("hardware")
        value = tuple(given.value()) if given is not None else MethodSpec.__dataclass_fields__["hardware"].default
        if not all(isinstance(h, str) for h in value):
            raise static.NotStatic(f"{module}: hardware is not a tuple of names")
        return value

    def read_reference(self, method_name: str) -> str:
        module = self.listing("method", method_name).module
        given = self._reader.registered(module, "method").get("reference")
        value = "" if given is None else given.value()
        if not isinstance(value, str):
            raise static.NotStatic(f"{module}: reference is not a string")
        return value

    def read_problem_types(self, kind: str, name: str) -> tuple[str, ...]:
        module = self.listing(kind, name).module
        given = self._reader.registered(module, kind).get("accepts" if kind == "method" else "problem")
        value = () if given is None else given.value()
        refs = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(ref, static.ClassRef) for ref in refs):
            raise static.NotStatic(f"{module}: the declared problem types are not classes of the repository")
        return tuple(ref.node.name for ref in refs)

    def read_metrics(self, family: str) -> Metrics:
        source = self._reader.source(self._family_package(family))
        metrics = source.lookup("METRICS")
        has_prefixes = source.has("METRIC_PREFIXES")
        if has_prefixes is None:
            raise static.NotStatic(f"{source.name}: METRIC_PREFIXES is not bound plainly")
        prefixes = source.lookup("METRIC_PREFIXES") if has_prefixes else {}
        for declared in (metrics, prefixes):
            if not isinstance(declared, dict) or not all(isinstance(m, Metric) for m in declared.values()):
                raise static.NotStatic(f"{source.name}: METRICS is not a dict of Metric")
        return Metrics(family, metrics, prefixes)


def _fields_of(config: type) -> dict[str, static.Field]:
    """The fields of an imported Config class: type (as build_config checks it) and default."""
    instance = config()
    return {name: static.Field(tp, getattr(instance, name)) for name, tp in field_types(config).items()}
