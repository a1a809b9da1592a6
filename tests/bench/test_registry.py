import subprocess
import sys
import textwrap

import pytest

from bench.errors import BenchError
from bench.registry import Listing, Registry


def test_every_builtin_module_is_discovered_and_loads(registry):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    stems = {p.stem for p in (root / "methods").glob("*/*.py") if not p.name.startswith("_")}
    assert set(registry.names("method")) == stems
    for name in registry.names("method"):
        method = registry.method(name)
        assert method.name == name and method.family == registry.listing("method", name).family
    for name in registry.names("task"):
        task = registry.task(name)
        family = registry.family(task.family)
        assert sum(m.primary for m in family.metrics.values()) == 1


def test_family_metrics_are_declared_by_name_or_by_prefix(registry):
    preference = registry.family("preference")
    assert preference.metric("win_rate") is preference.metrics["win_rate"]
    prefixed = preference.metric("lm_eval_ruler_4096")          # a suite's score, named only at run time
    assert prefixed is preference.metric_prefixes["lm_eval_"] and prefixed.higher_is_better
    assert preference.metric("ruler_4096") is None and preference.metric("lm_eval") is None
    performative = registry.family("performative")
    assert performative.metric_prefixes == {} and performative.metric("lm_eval_x") is None


def test_unknown_name_suggests_the_closest(registry):
    with pytest.raises(BenchError, match=r"unknown method 'dicesdg'; did you mean dicesgd") as info:
        registry.method("dicesdg")
    assert "\n" not in str(info.value)
    with pytest.raises(BenchError, match="unknown task 'performativ'; did you mean performative"):
        registry.task("performativ")
    with pytest.raises(BenchError, match="unknown paper"):
        registry.paper_path("clipped-sgd")


def test_duplicate_names_are_rejected():
    a = Listing("method", "sgd", "performative", "methods.performative.sgd", "", "builtin")
    b = Listing("method", "sgd", "other", "plugin.sgd", "", "someplugin")
    with pytest.raises(BenchError, match="duplicate method name 'sgd'"):
        Registry([a, b])


def test_incompatible_pairs_have_a_reason(registry, toy_registry):
    assert registry.incompatibility("dicesgd", "performative") is None
    assert "runs on cpu" in registry.incompatibility("dicesgd", "performative", "cuda")
    assert toy_registry.incompatibility("toy_raise", "toy_target", "cuda") == "toy_raise runs on cpu, not cuda"
    assert toy_registry.incompatibility("toy_gpu", "toy_target", "cuda:a100") is None


PLUGIN_MODULE = '''
"""A third-party method: plain gradient descent on the performative quadratic, no clipping."""
from dataclasses import dataclass

import numpy as np

from bench.registry import method
from tasks.performative import PerformativeResult


@dataclass(frozen=True)
class Config:
    T: int = 10  # iterations


@method(family="performative", config=Config)
def solve(problem, config, ctx):
    theta = problem.theta0.copy()
    for _ in range(config.T):
        theta = theta - 0.5 * problem.mean_gradient(theta, None)
    return PerformativeResult(theta, np.array([config.T]), theta[None, :], None)
'''


def _install_plugin(tmp_path, name: str) -> str:
    """pip-install a tiny distribution declaring a `bench.methods` entry point into tmp_path/site."""
    src = tmp_path / "src"
    (src / "bench_demo_plugin").mkdir(parents=True)
    (src / "bench_demo_plugin" / "__init__.py").write_text("")
    (src / "bench_demo_plugin" / "gd_plugin.py").write_text(PLUGIN_MODULE)
    (src / "pyproject.toml").write_text(textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "bench-demo-plugin"
        version = "0.0.1"
        [project.entry-points."bench.methods"]
        {name} = "bench_demo_plugin.gd_plugin"
    """))
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(site), str(src)], check=True, capture_output=True)
    return str(site)


def test_plugin_from_an_installed_distribution(tmp_path, monkeypatch):
    site = _install_plugin(tmp_path, "gd_plugin")
    monkeypatch.syspath_prepend(site)
    registry = Registry.discover()
    listing = registry.listing("method", "gd_plugin")
    assert listing.origin == "bench-demo-plugin" and listing.family == "performative"
    assert "third-party method" in listing.summary
    from bench.context import RunContext
    from tasks.performative import score

    task = registry.task("performative")
    problem = task.build(task.Config(), RunContext(seed=0).for_task())
    result = registry.method("gd_plugin").solve(problem, registry.method("gd_plugin").Config(T=200), RunContext(seed=0))
    assert score(problem, result)["final_gap"] < 1e-12  # full-batch GD on a contraction reaches θ_PS


def test_plugin_with_a_builtin_name_is_rejected(tmp_path, monkeypatch):
    site = _install_plugin(tmp_path, "dicesgd")
    monkeypatch.syspath_prepend(site)
    with pytest.raises(BenchError, match="duplicate method name 'dicesgd'"):
        Registry.discover()


def _imported_fields(entry) -> list[tuple]:
    """(name, type, default) of an imported Config, with the default's exact type (1 and 1.0 differ in a run_key)."""
    from bench.configs import field_types

    instance = entry.Config()
    return [(name, tp, type(getattr(instance, name)), getattr(instance, name))
            for name, tp in field_types(entry.Config).items()]


def test_a_family_with_several_problem_types_declares_them(registry):
    """Where a family's tasks build different problem types, every task says which and every method what it takes
    (an undeclared one would be compatible with all of them, and fail only after the task is built)."""
    for family in sorted({item.family for item in registry.listings}):
        tasks = [t for t in registry.names("task") if registry.listing("task", t).family == family]
        built = {registry.task(t).spec.problem for t in tasks}
        if len(built - {None}) > 1 or (None in built and len(built) > 1):
            assert None not in built, family
            for m in (m for m in registry.names("method") if registry.listing("method", m).family == family):
                accepts = registry.method(m).spec.accepts
                assert not accepts or set(accepts) <= built, m


def test_static_reading_agrees_with_the_imported_modules(registry):
    """The leaderboard reads every Config's fields, each method's hardware and each family's METRICS from source
    (bench.static); this imports them all and compares, for every registered method, task and family."""
    from bench.configs import config_dict
    from bench.spec import canonical_json

    fresh = Registry.discover()  # nothing imported through it: its read_* never fall back to importing
    for kind in ("method", "task"):
        for name in fresh.names(kind):
            entry = registry.method(name) if kind == "method" else registry.task(name)
            read = fresh.read_config_fields(kind, name)
            assert [(k, f.type, type(f.default), f.default) for k, f in read.items()] == _imported_fields(entry), name
            assert (canonical_json(fresh.config_defaults(kind, name))
                    == canonical_json(config_dict(entry.Config()))), name
    for name in fresh.names("method"):
        assert fresh.read_hardware(name) == registry.method(name).spec.hardware, name
    for name in fresh.names("task"):
        assert fresh.read_task_version(name) == registry.task(name).version, name
        problem = registry.task(name).spec.problem
        assert fresh.problem_types("task", name) == ((problem.__name__,) if problem else ()), name
    for name in fresh.names("method"):
        assert (fresh.problem_types("method", name)
                == tuple(k.__name__ for k in registry.method(name).spec.accepts)), name
    for family in sorted({item.family for item in fresh.listings}):
        read, imported = fresh.read_metrics(family), registry.family(family)
        assert list(read.metrics.items()) == list(imported.metrics.items()), family
        assert read.metric_prefixes == imported.metric_prefixes and read.primary_metric == imported.primary_metric
    assert not fresh._loaded


def test_the_leaderboard_reads_every_builtin_without_importing_it():
    """Every builtin method, task and family is read statically (a read that cannot falls back to importing, which
    is correct but costs the leaderboard seconds: this names the module and what stopped the reading)."""
    from bench.static import NotStatic

    fresh = Registry.discover(plugins=False)
    unreadable = []
    for kind, name in [(k, n) for k in ("method", "task") for n in fresh.names(k)] + [
            ("hardware", n) for n in fresh.names("method")] + [
            ("family", f) for f in {i.family for i in fresh.listings}] + [
            ("version", n) for n in fresh.names("task")]:
        try:
            {"method": lambda name=name: fresh.read_config_fields("method", name),
             "task": lambda name=name: fresh.read_config_fields("task", name),
             "hardware": lambda name=name: fresh.read_hardware(name),
             "family": lambda name=name: fresh.read_metrics(name),
             "version": lambda name=name: fresh.read_task_version(name)}[kind]()
        except NotStatic as exc:
            unreadable.append(f"{kind} {name}: {exc}")
    assert unreadable == []


FALLBACK_FAMILY = '''
import math

from bench.spec import Metric

METRICS = {"error": Metric(False, "", True, f"distance, {math.pi:.2f} at most")}  # math is not read: imported
'''

FALLBACK_METHOD = '''
import os
from dataclasses import dataclass, field

from bench.registry import method


@dataclass(frozen=True)
class Config:
    steps: int = 1 << 4                                    # computed from the source
    sizes: tuple[int, ...] = field(default_factory=lambda: (1, 2))   # only the class knows


@method(family="fallback", config=Config, hardware=("cpu", os.environ.get("FALLBACK_HW", "cuda")))
def solve(problem, config, ctx):
    return None
'''

STATIC_TASK = '''
from dataclasses import dataclass

from bench.registry import task
from bench_fallback import _sizes

SCALE = 2 ** -3


@dataclass(frozen=True)
class Config:
    dim: int = _sizes.DIMS[-1]
    scale: float = SCALE * 4
    name: str | None = f"d{_sizes.DIMS[0]}"


@task(family="fallback", config=Config)
def build(config, ctx):
    return None
'''


def test_what_the_source_cannot_tell_is_read_by_importing(tmp_path, monkeypatch):
    from bench.static import NotStatic

    package = tmp_path / "bench_fallback"
    package.mkdir()
    (package / "__init__.py").write_text(FALLBACK_FAMILY)
    (package / "_sizes.py").write_text("DIMS = tuple(range(2, 5))\n")
    (package / "fb_method.py").write_text(FALLBACK_METHOD)
    (package / "fb_task.py").write_text(STATIC_TASK)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry([Listing("method", "fb_method", "fallback", "bench_fallback.fb_method", "", "test"),
                         Listing("task", "fb_task", "fallback", "bench_fallback.fb_task", "", "test")])
    assert registry.config_defaults("task", "fb_task") == {"dim": 4, "scale": 0.5, "name": "d2"}
    assert "bench_fallback.fb_task" not in sys.modules  # read from its source
    with pytest.raises(NotStatic, match="sizes: field"):
        registry.read_config_fields("method", "fb_method")
    with pytest.raises(NotStatic):
        registry.read_hardware("fb_method")
    with pytest.raises(NotStatic, match="math"):
        registry.read_metrics("fallback")
    assert registry.config_defaults("method", "fb_method") == {"steps": 16, "sizes": [1, 2]}
    assert registry.hardware("fb_method") == ("cpu", "cuda")
    assert registry.declared_metrics("fallback").metrics["error"].description == "distance, 3.14 at most"
    assert "bench_fallback.fb_method" in sys.modules  # imported, since its source could not tell
    for name in [m for m in sys.modules if m.startswith("bench_fallback")]:
        monkeypatch.delitem(sys.modules, name)


def test_full_config_refuses_what_build_config_refuses(registry):
    from bench.cells import Entry, make_cell

    fresh = Registry.discover(plugins=False)
    for bad in ({"cc": 1.0}, {"c": "big"}, {"T": 1.5}):
        with pytest.raises(BenchError) as built:
            make_cell(registry, Entry("pcsgd", bad), Entry("performative"), 0)
        with pytest.raises(BenchError) as read:
            fresh.full_config("method", "pcsgd", bad)
        assert str(read.value) == str(built.value)
    assert fresh.full_config("method", "pcsgd", {"c": 2}) == dict(make_cell(registry, Entry("pcsgd", {"c": 2}),
                                                                             Entry("performative"), 0).method_config)


def test_only_not_static_falls_back_and_the_registry_says_so(caplog):
    """A value the reader cannot compute (NotStatic) is imported, with an INFO line naming it; any other exception
    is a bug of the reader and surfaces instead of hiding behind an import."""
    import logging

    from bench.static import NotStatic

    registry = Registry([])

    def cannot() -> int:
        raise NotStatic("a default made by a call")

    def broken() -> int:
        raise KeyError("config")

    with caplog.at_level(logging.INFO, logger="bench.registry"):
        assert registry._read(("config", "method", "m"), cannot, lambda: 7) == 7
    assert "config method m read by importing its module: a default made by a call" in caplog.text
    with pytest.raises(KeyError, match="config"):
        registry._read(("config", "method", "other"), broken, lambda: 7)
