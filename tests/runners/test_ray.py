"""The Ray runner on a local Ray (2 CPUs, no GPU): options, feasibility, failures, timeout, resume.

One Ray instance serves the module; workers import the toy family through PYTHONPATH.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from sqlalchemy import text

from bench.cells import Entry, expand
from bench.errors import BenchError
from bench.registry import Listing, Registry
from bench.spec import Cell, Resources
from bench.store import Store
from runners import local
from tests.helpers import FIXTURES, default_sigint

pytestmark = pytest.mark.integration  # Ray clusters and driver processes

ray = pytest.importorskip("ray")
from runners import ray as ray_runner  # noqa: E402

RUNTIME_ENV = {"env_vars": {"PYTHONPATH": os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")])}}


@pytest.fixture(scope="module")
def local_ray():
    ray_runner.connect(None, RUNTIME_ENV, num_cpus=2)
    yield
    ray.shutdown()


def _cells(registry, methods, seeds=(0,), hardware=("cpu",)):
    return expand(registry, [Entry(m, c) for m, c in methods], [Entry("toy_target")], list(seeds), list(hardware)).cells


def test_options_come_from_declared_resources_and_hardware(toy_registry):
    cpu, cuda, a100 = (Cell("toy_gpu", "toy_target", 0, {}, {}, hw) for hw in ("cpu", "cuda", "cuda:a100"))
    assert ray_runner.cell_options(cpu, toy_registry) == {"num_cpus": 1.0, "num_gpus": 0.0, "resources": {},
                                                          "memory": 1024**3}
    assert ray_runner.cell_options(cuda, toy_registry)["num_gpus"] == 1.0
    assert ray_runner.cell_options(a100, toy_registry)["resources"] == {"accelerator_type:A100": 0.001}
    method = toy_registry.method("toy_gpu")
    object.__setattr__(method.spec, "resources", Resources(cpus=4, gpus=2, memory_gb=0))
    try:
        options = ray_runner.cell_options(cuda, toy_registry)
        assert options["num_cpus"] == 4.0 and options["num_gpus"] == 2.0 and "memory" not in options
    finally:
        object.__setattr__(method.spec, "resources", Resources())


def test_infeasibility_names_what_is_missing():
    nodes = [{"CPU": 2.0, "memory": 8 * 1024**3},
             {"CPU": 8.0, "GPU": 1.0, "accelerator_type:T4": 1.0, "memory": 8 * 1024**3}]
    assert ray_runner.infeasibility({"CPU": 8.0, "GPU": 1.0}, nodes) is None
    assert ray_runner.infeasibility({"CPU": 4.0, "memory": 1024**3}, nodes) is None
    reason = ray_runner.infeasibility({"CPU": 1.0, "GPU": 1.0, "accelerator_type:A100": 0.001}, nodes)
    assert "needs 1 CPU, 1 GPU, a A100 GPU" in reason and "no node has enough accelerator_type:A100" in reason
    reason = ray_runner.infeasibility({"CPU": 1.0, "GPU": 1.0}, nodes[:1])
    assert "this cluster has no GPU" in reason
    assert "no node has enough CPU" in ray_runner.infeasibility({"CPU": 16.0}, nodes)


def test_transient_failures_are_the_ones_retried():
    from ray import exceptions as rex

    assert ray_runner.is_transient(rex.WorkerCrashedError())
    assert ray_runner.is_transient(rex.NodeDiedError("node 1 died"))
    assert ray_runner.is_transient(rex.OutOfMemoryError("killed for memory"))
    assert not ray_runner.is_transient(rex.TaskCancelledError())
    assert not ray_runner.is_transient(RuntimeError("deterministic"))
    assert not ray_runner.is_transient(rex.RayTaskError("f", "tb", ValueError("x")))


def test_grid_on_ray_stores_every_outcome_like_the_local_runner(local_ray, toy_registry, tmp_path):
    cells = _cells(toy_registry, [("toy_noisy", {}), ("toy_raise", {}), ("toy_crash", {})], seeds=(0, 1))
    cells += _cells(toy_registry, [("toy_gpu", {})], hardware=("cuda", "cuda:a100"))
    store = Store.open(f"sqlite:///{tmp_path}/ray.db")
    snapshots, records = [], []
    summary = ray_runner.run_cells(cells, store, toy_registry, retries=1, on_status=snapshots.append,
                                   on_record=records.append)
    assert summary.counts == {"done": 2, "failed": 4, "infeasible": 2}
    runs = {(r.method, r.seed, r.hardware): r for r in store.runs()}
    assert len(runs) == len(cells) == 8 and all(r.runner == "ray" for r in runs.values())
    # a method's exception is data, returned by execute(): stored once, never retried
    assert "RuntimeError: deliberate failure" in runs[("toy_raise", 0, "cpu")].error
    assert "attempt" not in runs[("toy_raise", 0, "cpu")].error
    # a worker that dies mid-cell is transient: retried, then stored as failed with the reason
    crash = runs[("toy_crash", 1, "cpu")]
    assert crash.status == "failed" and "WorkerCrashedError (transient, attempt 2 of 2)" in crash.error
    # no GPU on this cluster: stored as infeasible with the reason instead of waiting forever
    gpu = runs[("toy_gpu", 0, "cuda")]
    assert gpu.status == "infeasible" and "needs 1 CPU, 1 GPU" in gpu.error and "this cluster has no GPU" in gpu.error
    assert "a A100 GPU" in runs[("toy_gpu", 0, "cuda:a100")].error
    assert all(r.task_version == 2 for r in runs.values())
    # the same numbers as the local runner
    other = Store.open(f"sqlite:///{tmp_path}/local.db")
    local.run_cells([c for c in cells if c.method == "toy_noisy"], other, toy_registry)
    keys = [c.run_key for c in cells if c.method == "toy_noisy"]
    assert store.metrics(keys) == other.metrics(keys)
    assert store.curve(keys[0], "loss") == other.curve(keys[0], "loss") == [(1, 1.0), (2, 0.5), (3, 1 / 3)]
    # progress: counts of running and pending, ending with nothing left
    assert snapshots[0]["pending"] == 6 and snapshots[0]["infeasible"] == 2
    assert max(s["running"] for s in snapshots) == 2  # the 2 CPUs, not more
    assert snapshots[-1] == {"running": 0, "pending": 0, "done": 2, "failed": 4, "infeasible": 2}
    assert len(records) == 8
    # rerun: done cells are skipped, failures are tried again, no row twice
    again = ray_runner.run_cells(cells, store, toy_registry, retries=0)
    assert again.already_done == 2 and again.counts == {"failed": 4, "infeasible": 2}
    assert store.count() == 8


def test_hard_timeout_cancels_the_task(local_ray, toy_registry, tmp_path):
    cells = _cells(toy_registry, [("toy_sleep", {"seconds": 120.0}), ("toy_noisy", {})])
    store = Store.open(f"sqlite:///{tmp_path}/t.db")
    started = time.monotonic()
    # the hard timeout counts from submission, so it includes a worker's start-up (seconds here)
    summary = ray_runner.run_cells(cells, store, toy_registry, timeout=10.0)
    assert time.monotonic() - started < 60
    assert summary.counts == {"done": 1, "timeout": 1}, [r.error for r in store.runs()]
    run = store.runs(method="toy_sleep")[0]
    assert run.status == "timeout" and "exceeded --timeout 10 s" in run.error and run.wall_s >= 10.0


def test_unreachable_ray_address_is_a_one_line_error(tmp_path):
    env = {**os.environ, "BENCH_DB_URL": f"sqlite:///{tmp_path}/x.db"}
    started = time.monotonic()
    cli = subprocess.run([sys.executable, "-m", "bench", "grid", "-m", "sgd", "-t", "performative", "--runner", "ray",
                          "--address", "127.0.0.1:1"], capture_output=True, text=True, env=env, timeout=300)
    assert cli.returncode == 2, cli.stderr
    assert (cli.stderr.startswith("error: cannot reach a Ray cluster at 127.0.0.1:1")
            and len(cli.stderr.splitlines()) == 1)
    assert time.monotonic() - started < 120
    with pytest.raises(BenchError, match="dashboard"):
        ray_runner.connect("http://127.0.0.1:8265")
    bad = subprocess.run([sys.executable, "-m", "bench", "grid", "-m", "sgd", "-t", "performative", "--runner", "dask"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "allowed: local, ray" in bad.stderr


KILLED_GRID = """
import sys
sys.path.insert(0, {fixtures!r})
from bench.registry import Listing, Registry
from bench.store import Store
from bench.cells import Entry, expand
from runners.ray import run_cells
registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "t"),
                     Listing("method", "toy_sleep", "toy", "bench_toy.toy_sleep", "", "t")])
cells = expand(registry, [Entry("toy_sleep", {{"seconds": 0.5}})], [Entry("toy_target")], list(range(24)), ["cpu"]).cells
try:
    run_cells(cells, Store.open({url!r}), registry, num_cpus=2,
              runtime_env={{"env_vars": {{"PYTHONPATH": {fixtures!r}}}}})
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""  # noqa: E501


def _sleep_cells():
    sys.path.insert(0, str(FIXTURES))  # the local runner imports the toy family in this process
    registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "t"),
                         Listing("method", "toy_sleep", "toy", "bench_toy.toy_sleep", "", "t")])
    return registry, expand(registry, [Entry("toy_sleep", {"seconds": 0.5})], [Entry("toy_target")], list(range(24)),
                            ["cpu"]).cells


@pytest.fixture
def drivers():
    """Driver processes a test starts, each in its own session; their leftovers are ended after it."""
    started = []
    yield started
    for proc in started:
        try:  # the killed driver's own local Ray (agents) must not outlive the test
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _start_and_stop(tmp_path, name, sig, drivers):
    url = f"sqlite:///{tmp_path}/{name}.db"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_GRID.format(fixtures=str(FIXTURES), url=url)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
                            preexec_fn=default_sigint)
    drivers.append(proc)
    store = Store.open(url)
    deadline = time.monotonic() + 180
    while store.count() < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    return url, store, proc, code


def test_driver_killed_then_resumed_by_either_runner_loses_and_repeats_nothing(local_ray, tmp_path, drivers):
    url, store, proc, code = _start_and_stop(tmp_path, "killed", signal.SIGKILL, drivers)
    assert code == -signal.SIGKILL
    kept = {r.run_key for r in store.runs()}
    assert 3 <= len(kept) < 24 and all(r.status == "done" for r in store.runs())
    with sqlite3.connect(f"{tmp_path}/killed.db") as source, sqlite3.connect(f"{tmp_path}/copy.db") as copy_:
        source.backup(copy_)  # the same state (WAL included), for the other runner
    registry, cells = _sleep_cells()
    with_local = local.run_cells(cells, store, registry, workers=2)
    copy = Store.open(f"sqlite:///{tmp_path}/copy.db")
    with_ray = ray_runner.run_cells(cells, copy, registry)
    for resumed, summary in ((store, with_local), (copy, with_ray)):
        assert summary.already_done == len(kept) and summary.counts == {"done": 24 - len(kept)}
        with resumed.engine.connect() as connection:
            assert connection.execute(text("SELECT COUNT(*), COUNT(DISTINCT run_key) FROM runs")).one() == (24, 24)
            assert connection.execute(text("SELECT COUNT(*) FROM runs WHERE status = 'done'")).scalar() == 24
        assert kept <= {r.run_key for r in resumed.runs()}


def test_ctrl_c_of_the_driver_keeps_every_finished_cell(tmp_path, drivers):
    url, store, proc, code = _start_and_stop(tmp_path, "sigint", signal.SIGINT, drivers)
    assert code == 130 and "interrupted" in proc.stdout.read()
    assert 3 <= store.count() < 24 and all(r.status == "done" for r in store.runs())


def test_cli_grid_on_ray_shows_progress_and_stores_runs(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    cli = subprocess.run([sys.executable, "-m", "bench", "grid", "-m", "sgd", "-t", "performative", "--set", "T=2000",
                          "--seeds", "0-2", "--runner", "ray", "--db", url], capture_output=True, text=True,
                         timeout=300)
    assert cli.returncode == 0, cli.stderr
    assert "3/3" in cli.stderr and "pending=0 running=0" in cli.stderr and "cells: 3 done" in cli.stderr
    assert not [line for line in cli.stderr.splitlines() if " INFO " in line or " WARNING " in line]  # --verbose
    runs = Store.open(url).runs()
    assert len(runs) == 3 and {(r.status, r.runner) for r in runs} == {("done", "ray")}
    again = subprocess.run([sys.executable, "-m", "bench", "grid", "-m", "sgd", "-t", "performative", "--set", "T=2000",
                            "--seeds", "0-2", "--db", url], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "3 already done" in again.stderr  # resumed by the local runner


@pytest.mark.integration
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_ray_driver_leaves_no_ray_process_after_5_s(tmp_path, drivers, sig):
    from runners.reaper import _processes, _ray_descendants

    url = f"sqlite:///{tmp_path}/stopped.db"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_GRID.format(fixtures=str(FIXTURES), url=url)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    drivers.append(proc)
    store, ray_dir = Store.open(url), os.fsencode(os.path.dirname(ray.__file__))
    deadline = time.monotonic() + 180
    while store.count() < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    local_ray = _ray_descendants(proc.pid, ray_dir, _processes())
    names = b" ".join(_processes()[pid][3] for pid in local_ray)
    assert b"raylet" in names and b"ray::DashboardAgent" in names and b"ray::RuntimeEnvAgent" in names
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == (130 if sig == signal.SIGTERM else -signal.SIGKILL)
    gone_by = time.monotonic() + 5

    def alive():
        now = _processes()
        return [now[pid][3][:60] for pid, started in local_ray.items()
                if pid in now and now[pid][1] == started and now[pid][2] != b"Z"]

    while alive() and time.monotonic() < gone_by:
        time.sleep(0.2)
    assert alive() == []
