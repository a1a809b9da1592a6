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
from tasks.performative import Result


@dataclass(frozen=True)
class Config:
    T: int = 10  # iterations


@method(family="performative", config=Config)
def solve(problem, config, ctx):
    theta = problem.theta0.copy()
    for _ in range(config.T):
        theta = theta - 0.5 * problem.mean_gradient(theta, None)
    return Result(theta, np.array([config.T]), theta[None, :], None)
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
