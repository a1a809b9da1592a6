"""Drivers as separate processes on one store: two at once over the same grid, and a PostgreSQL
server restarted under a running grid. Each driver prints its summary; a cell run twice would
show as more `done` records than cells, a replaced result as a `kept` count or a changed row."""

import json
import os
import subprocess
import sys
import time

import pytest
from sqlalchemy import text

from bench.store import Store
from tests.helpers import FIXTURES
from tests.pg import pg_server_url, pg_url, private_pg  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration

DRIVER = """
import json, sys
sys.path.insert(0, {fixtures!r})
from bench.registry import Listing, Registry
from bench.store import Store
from bench.cells import Entry, expand
from runners.local import run_cells
registry = Registry([Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "t"),
                     Listing("method", "toy_sleep", "toy", "bench_toy.toy_sleep", "", "t")])
cells = expand(registry, [Entry("toy_sleep", {{"seconds": {seconds}}})], [Entry("toy_target")], list(range({n})), ["cpu"]).cells
s = run_cells(cells, Store.open({url!r}), registry, workers={workers}, isolate=True)
print(json.dumps({{"counts": dict(s.counts), "already_done": s.already_done, "leased": s.leased, "kept": s.kept}}))
"""  # noqa: E501


def _driver(url, n, seconds=0.2, workers=2, **kwargs):
    script = DRIVER.format(fixtures=str(FIXTURES), url=url, n=n, seconds=seconds, workers=workers)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)


def _summary(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), err


def _rows(url):
    with Store.open(url).engine.connect() as connection:
        return connection.execute(text("SELECT COUNT(*), COUNT(DISTINCT run_key), SUM(CASE WHEN status = 'done' "
                                       "THEN 1 ELSE 0 END) FROM runs")).one()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'bench.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    Store.open(url)
    return url


def test_two_drivers_over_one_grid_run_each_cell_once(url):
    n = 20
    first, second = _driver(url, n, seconds=0.3), _driver(url, n, seconds=0.3)
    (a, _), (b, _) = _summary(first), _summary(second)
    assert a["counts"].get("done", 0) > 0 and b["counts"].get("done", 0) > 0  # they did run at once
    assert a["counts"].get("done", 0) + b["counts"].get("done", 0) == n  # every cell ran exactly once
    assert a["kept"] == b["kept"] == 0 and set(a["counts"]) | set(b["counts"]) == {"done"}
    assert (a["leased"] + a["already_done"] + a["counts"]["done"]
            == n == b["leased"] + b["already_done"] + b["counts"]["done"])
    assert tuple(_rows(url)) == (n, n, n)
    with Store.open(url).engine.connect() as connection:
        assert connection.execute(text("SELECT COUNT(*) FROM leases")).scalar() == 0  # released at the end


def test_a_second_driver_never_replaces_a_stored_result(url):
    n = 6
    _summary(_driver(url, n, seconds=0.05))
    before = {(r.run_key, r.status, r.finished_at) for r in Store.open(url).runs()}
    again, _ = _summary(_driver(url, n, seconds=0.05))  # planned before, or leased: either way untouched
    assert again["already_done"] == n and again["counts"] == {}
    assert {(r.run_key, r.status, r.finished_at) for r in Store.open(url).runs()} == before


def test_a_grid_goes_on_through_a_postgres_restart(private_pg):
    n = 30
    Store.open(private_pg.url)
    proc = _driver(private_pg.url, n, seconds=0.1, workers=1, env={**os.environ, "BENCH_STORE_RETRY_S": "60"})
    deadline = time.monotonic() + 60
    while Store.open(private_pg.url).count() < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    private_pg.stop()  # mid-grid: cells keep finishing while the saves wait
    time.sleep(2.0)
    private_pg.start()
    summary, err = _summary(proc)
    assert "store unreachable" in err and summary["counts"] == {"done": n} and summary["kept"] == 0
    assert tuple(_rows(private_pg.url)) == (n, n, n)  # nothing lost, nothing twice


def test_an_outage_past_the_retry_time_stops_the_cli_with_one_line_and_a_rerun_resumes(private_pg):
    n = 120
    # cells of about 0.1 s each: a reused worker runs 120 cells of T=3000 before the server is down
    command = [sys.executable, "-m", "bench", "grid", "-m", "sgd", "-t", "performative", "--set", "T=100000",
               "--seeds", f"0-{n - 1}", "--store-retry", "1", "--db", private_pg.url]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while Store.open(private_pg.url).count() < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    private_pg.stop()
    _, err = proc.communicate(timeout=120)
    private_pg.start()
    stored = Store.open(private_pg.url).count()
    assert proc.returncode == 3 and 3 <= stored < n, err  # an environment fault: exit 3
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: the store postgresql+psycopg://") and "was unreachable for 1 s" in last
    assert f"{stored} finished cells of this run are stored" in last and "rerun the same command to resume" in last
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0 and f"{stored} already done" in rerun.stderr, rerun.stderr
    assert tuple(_rows(private_pg.url)) == (n, n, n)
