"""`bench check NAME` and bench.testing on what a newcomer brings: a plugin package installed from its own folder (the
entry points the registry reads), a paper's claims file, and a name that is none of these."""

import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest

from app.commands.check import check_paper
from bench.testing import CheckFailed
from tests.helpers import run_bench

FAMILY = '''
"""A plugin's family: estimate the mean of Gaussian samples."""

from dataclasses import dataclass

import numpy as np

from bench.spec import Metric


@dataclass(frozen=True, eq=False)
class MeanProblem:
    samples: np.ndarray
    mean: float


@dataclass(frozen=True)
class MeanResult:
    estimate: float


METRICS = {"abs_error": Metric(False, "", True, "|estimate - mean|")}


def score(problem: MeanProblem, result: MeanResult) -> dict[str, float]:
    return {"abs_error": abs(result.estimate - problem.mean)}
'''

TASK = '''
"""Samples of N(mean, 1)."""

from dataclasses import dataclass

from bench.registry import task
from {package} import MeanProblem


@dataclass(frozen=True)
class Config:
    n: int = 1000  # samples
    mean: float = 1.5  # the mean to estimate


@task(family="{package}", config=Config, smallest={{"n": 64}})
def build(config: Config, ctx) -> MeanProblem:
    return MeanProblem(ctx.rng.normal(config.mean, 1.0, size=config.n), config.mean)
'''

METHOD = '''
"""{doc}"""

from dataclasses import dataclass

import numpy as np

from bench.registry import method
from {package} import MeanResult

SWITCHED_OFF = "a plugin's baseline estimator: there is no paper mechanism to switch off"


@dataclass(frozen=True)
class Config:
    trim: float = 0.1  # fraction of the samples trimmed at each end


@method(family="{package}", config=Config)
def solve(problem, config: Config, ctx) -> MeanResult:
{body}
'''

TRIMMED = """    x = np.sort(problem.samples)
    k = int(config.trim * len(x))
    return MeanResult(float(x[k:len(x) - k].mean()))"""
SORTS_IN_PLACE = """    x = problem.samples
    x.sort()  # the problem's own array, reordered
    k = int(config.trim * len(x))
    return MeanResult(float(x[k:len(x) - k].mean()))"""
UNSEEDED = """    jitter = np.random.default_rng().normal(0.0, 1e-3)  # a fresh generator: not ctx.rng
    return MeanResult(float(problem.samples.mean()) + jitter)"""


def _package(root, package: str, methods: dict[str, tuple[str, str]], task: str):
    """A plugin distribution in `root/package`: its family, one task and `methods` {name: (docstring, body)}."""
    folder = root / package
    (folder / package).mkdir(parents=True)
    (folder / package / "__init__.py").write_text(FAMILY)
    (folder / package / f"{task}.py").write_text(TASK.format(package=package))
    for name, (doc, body) in methods.items():
        (folder / package / f"{name}.py").write_text(METHOD.format(package=package, doc=doc, body=body))
    entries = "\n".join(f'{name} = "{package}.{name}"' for name in methods)
    (folder / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{package}"
        version = "0.1"

        [project.entry-points."bench.methods"]
        """) + entries + textwrap.dedent(f"""

        [project.entry-points."bench.tasks"]
        {task} = "{package}.{task}"

        [tool.setuptools]
        packages = ["{package}"]
        """))
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two plugin distributions installed into one folder (what PYTHONPATH then adds): a good one, and one whose
    methods mutate their problem or draw from an unseeded generator."""
    root = tmp_path_factory.mktemp("plugins")
    good = _package(root, "meanplug", {"trimmed_mean": ("The trimmed mean.", TRIMMED)}, "gaussian_mean")
    bad = _package(root, "badplug", {"sorting_mean": ("Trims after sorting the problem's own samples.",
                                                      SORTS_IN_PLACE),
                                     "jittered_mean": ("The sample mean plus unseeded jitter.", UNSEEDED)},
                   "bad_gaussian_mean")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                    "--disable-pip-version-check", "--quiet", "--target", str(root / "site"), str(good), str(bad)],
                   check=True, capture_output=True, text=True)
    return root / "site"


def _check(site, name):
    return run_bench("check", name, env={"PYTHONPATH": str(site)}, columns=240)


@pytest.mark.integration  # pip and the `bench` command as subprocesses
def test_an_installed_plugin_method_and_task_pass_every_check(site):
    method, task = _check(site, "trimmed_mean"), _check(site, "gaussian_mean")
    assert (method.returncode, task.returncode) == (0, 0), method.stdout + method.stderr + task.stdout + task.stderr
    lines = method.stdout.splitlines()
    assert len(lines) == 4 + 3 and all(line.startswith("pass  ") for line in lines)  # its own 4, then 3 per task
    assert "trimmed_mean x gaussian_mean: solving leaves the problem as built" in method.stdout
    assert "trimmed_mean: a registered task it runs on: gaussian_mean" in method.stdout  # not the other plugin's
    assert method.stderr.strip() == "trimmed_mean: 7 of 7 checks passed"
    assert "gaussian_mean: its family declares its metrics and a score: primary metric abs_error" in task.stdout
    assert "gaussian_mean: short settings declared in @task(...): n=64" in task.stdout
    listed = run_bench("list", "methods", env={"PYTHONPATH": str(site)}, columns=240).stdout
    assert "trimmed_mean [meanplug]" in listed  # the registry read the entry point


@pytest.mark.integration  # pip and the `bench` command as subprocesses
def test_a_plugin_method_that_mutates_its_problem_fails_that_check_only(site):
    result = _check(site, "sorting_mean")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert failed == ["FAIL  sorting_mean x bad_gaussian_mean: solving leaves the problem as built: sorting_mean "
                      "changed the bad_gaussian_mean problem it was given"]
    assert result.stderr.strip() == "sorting_mean: 6 of 7 checks passed"


@pytest.mark.integration  # pip and the `bench` command as subprocesses
def test_a_plugin_method_that_is_not_deterministic_fails_that_check_only(site):
    result = _check(site, "jittered_mean")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and failed[0].startswith(
        "FAIL  jittered_mean x bad_gaussian_mean: the same seed gives the same metrics: the same seed gave other "
        "metrics: abs_error ")
    task = _check(site, "bad_gaussian_mean")  # the task itself is fine; its two methods' failures show under it
    assert task.returncode == 1 and sum(line.startswith("FAIL") for line in task.stdout.splitlines()) == 2


def test_an_unknown_name_is_one_line_exit_2_naming_the_close_ones(monkeypatch, capsys):
    from app import cli

    monkeypatch.setattr(sys, "argv", ["bench", "check", "sgdd"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    printed = capsys.readouterr()
    assert exit_.value.code == 2 and printed.out == ""
    assert printed.err == ("error: unknown method, task or paper 'sgdd'; did you mean sgd, pcsgd, esd? "
                           "(bench list methods, bench list tasks, bench list papers)\n")


UNCONTROLLED = """
  - id: beats-again
    cells: [{method: toy_noisy, task: toy_target, method_config: {noise: 0.01}}, {method: toy_noisy, task: toy_target}]
    expect: {order: increasing}
"""  # noqa: E501


def test_a_papers_checks_pass_and_a_claim_without_a_negative_control_fails_naming_it(tmp_path, toy_registry):
    """tests/leaderboard/test_lock.py's toy paper: a claim with its control, one at paper scale and a sanity check."""
    from tests.leaderboard.test_lock import CLAIMS

    registry = replace(toy_registry, papers_dir=tmp_path)
    (tmp_path / "toy-paper.yaml").write_text(CLAIMS)
    outcomes = check_paper("toy-paper", registry)
    # noise 0.01, 0.1 (the default) and 0.02 at dim 3, and the paper-scale claim's dim 9
    assert [o.note for o in outcomes] == ["3 claims, controls and checks", "4 cells at one seed", "", "toy_noisy"]
    (tmp_path / "toy-paper.yaml").write_text(CLAIMS.replace("claims:\n", "claims:" + UNCONTROLLED))
    with pytest.raises(CheckFailed, match=r"toy-paper: 1 of 4 checks failed: toy-paper: every CPU-scale claim has a "
                                          r"negative control or control_none: .*: beats-again$"):
        check_paper("toy-paper", registry)
    (tmp_path / "toy-paper.yaml").write_text(CLAIMS.replace("metric: error", "metric: eror"))
    with pytest.raises(CheckFailed, match=r"4 of 4 checks failed: .*unknown metric 'eror'.*not checked: the claims "
                                          r"file is not valid"):
        check_paper("toy-paper", registry)
