"""Leaderboard speed on a synthetic store of 100,000 runs (prints; asserts nothing).

    .venv/bin/python benchmarks/leaderboard_speed.py [--runs 100000]

Targets: the overview under 1 s, every page of the app under 2 s, the queries under 1 s. The
synthetic store holds done runs of the performative methods over 5 task instances and many seeds,
each with its metrics, inserted in bulk.

Every figure is measured in a fresh Python process, so nothing an earlier figure imported or
cached helps a later one:
  - import: the leaderboard's modules (bench.registry, bench.store, leaderboard.queries, leaderboard.claims);
  - query: one function of leaderboard.queries / leaderboard.claims, after those imports;
  - page: the app's first render of a page (Streamlit AppTest, as tests/leaderboard/test_app.py runs
    it), with streamlit, pandas and plotly imported and Streamlit's components scanned, as in a
    running `bench leaderboard` server, but every cache of the app empty.
Each line also says how many method or task modules the process imported: the leaderboard reads
what it needs from the registry statically, so this stays 0.
  - cold start: `bench leaderboard` launched on the store, until headless Chromium (Debian's chromium) shows the
    overview's table, then each page's time to its content in that browser (target < 3 s for the first).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "leaderboard" / "app.py")
PAGES = {"overview": 1.0, "task": 2.0, "paper": 2.0, "runs": 2.0}  # page -> target (s)


def build(url: str, runs: int) -> None:
    from bench.models import MetricValue, Run
    from bench.registry import Registry
    from bench.store import Store
    from bench.cells import Entry, make_cell

    registry = Registry.discover()
    store = Store.open(url)
    env_id = store.environment_id()
    methods = ["dicesgd", "pcsgd", "sgd", "pcsgd_optimal_step", "pcsgd_nonoptimal_step"]
    betas = [0.01, 0.02, 0.03, 0.05, 0.07]
    seeds = runs // (len(methods) * len(betas))
    rng = np.random.default_rng(0)
    now = datetime.now()
    run_rows, metric_rows = [], []
    for method in methods:
        for beta in betas:
            template = make_cell(registry, Entry(method), Entry("performative", {"beta": beta}), 0)
            for seed in range(seeds):
                key = f"{hash((method, beta, seed)) & (2**256 - 1):064x}"
                run_rows.append(dict(run_key=key, setting_key=template.setting_key, method=method,
                                     method_config=dict(template.method_config),
                                     task="performative", task_version=1, task_config=dict(template.task_config),
                                     seed=seed, hardware="cpu", status="done", error=None, started_at=now,
                                     finished_at=now, wall_s=0.1, peak_mem_mb=100.0, runner="local",
                                     code_version="bench", environment_id=env_id))
                gap = float(rng.lognormal(-3, 1))
                metric_rows += [dict(run_key=key, name="final_gap", value=gap),
                                dict(run_key=key, name="shifted_modulus", value=1 - 10 * beta)]
    with store.engine.begin() as connection:
        connection.execute(Run.__table__.insert(), run_rows)
        connection.execute(MetricValue.__table__.insert(), metric_rows)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _heavy_modules() -> int:
    return sum(name.split(".")[0] in ("methods", "tasks") for name in sys.modules)


def measure(what: str, url: str) -> dict:
    """One figure, in this (fresh) process."""
    imported = timed(lambda: __import__("leaderboard.claims") and __import__("leaderboard.queries"))
    if what == "import":
        return {"seconds": imported, "modules": _heavy_modules()}
    from bench.registry import Registry
    from bench.store import Store
    from leaderboard import claims, queries

    if what.startswith("query:"):
        store, registry = Store.open(url, readonly=True), Registry.discover()
        fn = {"overview": lambda: claims.overview(store, registry),
              "board": lambda: queries.leaderboard_rows(store, registry, task="performative"),
              "runs": lambda: queries.runs_table(store, status="done")}[what.split(":")[1]]
        return {"seconds": timed(fn), "modules": _heavy_modules()}
    import pandas  # noqa: F401 - what a running server has imported before any page is asked for
    import plotly.graph_objects  # noqa: F401
    from streamlit.testing.v1 import AppTest

    os.environ["BENCH_DB_URL"] = url
    view = what.split(":")[1]
    app = AppTest.from_file(APP, default_timeout=300)
    # a server scans the installed distributions for Streamlit components once, when it starts; AppTest
    # does it on its first run: done here, before the clock starts (~0.5 s, the same for every page)
    from streamlit.components.v2.component_manager import BidiComponentManager

    app._bidi_component_manager = BidiComponentManager()
    app._bidi_component_manager.discover_and_register_components(start_file_watching=False)
    app.query_params["view"] = view
    if view == "task":
        app.query_params["task"] = "performative"
    seconds = timed(app.run)
    if app.exception:
        raise RuntimeError(f"page {view}: {[e.value for e in app.exception]}")
    return {"seconds": seconds, "modules": _heavy_modules()}


def fresh(what: str, url: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, __file__, "--measure", what, "--db", url], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{what}: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(label: str, result: dict, target: float) -> None:
    seconds = result["seconds"]
    print(f"{label:34s} {seconds:5.2f} s  (target < {target:g} s: ratio {seconds / target:.2f}; "
          f"method/task modules imported: {result['modules']})", flush=True)


def cold_start(url: str) -> None:
    """`bench leaderboard` from launch to the overview drawn in a browser, then each page's time in it."""
    import shutil
    import signal
    import socket
    import urllib.request

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        print("cold start: not measured (Debian's chromium is not installed)")
        return
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        start = time.perf_counter()
        server = subprocess.Popen([sys.executable, "-m", "bench", "leaderboard", "--port", str(port), "--db", url],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    urllib.request.urlopen(f"{base}/_stcore/health", timeout=1)
                    break
                except OSError:
                    time.sleep(0.05)
            up = time.perf_counter() - start
            page.goto(f"{base}/?view=overview")
            page.locator("table.board").wait_for(timeout=300_000)
            report("cold start: launch to overview drawn", {"seconds": time.perf_counter() - start,
                                                             "modules": f"n/a (server up after {up:.2f} s)"}, 3.0)
            for view, query, ready in (("paper", "paper=clipped-sgd-performative", "div.card"),
                                       ("task", "task=performative", ".js-plotly-plot"),
                                       ("runs", "", "[data-testid='stDataFrame']"),
                                       ("overview", "", "table.board")):
                begin = time.perf_counter()
                page.goto(f"{base}/?view={view}" + (f"&{query}" if query else ""))
                page.locator(ready).first.wait_for(timeout=300_000)
                report(f"in the browser: {view}", {"seconds": time.perf_counter() - begin, "modules": "n/a"},
                       PAGES[view])
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.db)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/big.db"
        print(f"building {args.runs} runs: {timed(lambda: build(url, args.runs)):.1f} s")
        report("import: the leaderboard's modules", fresh("import", url), 1.0)
        report("query: overview verdicts", fresh("query:overview", url), 1.0)
        report("query: leaderboard of one task", fresh("query:board", url), 1.0)
        report("query: run explorer (1000 rows)", fresh("query:runs", url), 1.0)
        for view, target in PAGES.items():
            report(f"app first render: {view}", fresh(f"page:{view}", url), target)
        cold_start(url)


if __name__ == "__main__":
    main()
