"""Leaderboard speed on a synthetic store of 100,000 runs (prints; asserts nothing).

    .venv/bin/python benchmarks/leaderboard_speed.py [--runs 100000]

Targets (issue "The leaderboard"): the app's first render under 2 s, the queries under 1 s.
The synthetic store holds done runs of the performative methods over 5 task instances and
many seeds, each with its metrics, inserted in bulk.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np

APP = str(Path(__file__).resolve().parent.parent / "leaderboard" / "app.py")


def build(url: str, runs: int) -> None:
    from bench.models import MetricValue, Run
    from bench.registry import Registry
    from bench.store import Store
    from runners.grid import Entry, make_cell

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
                run_rows.append(dict(run_key=key, setting_key=template.setting_key, method=method, method_config=dict(template.method_config),
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/big.db"
        print(f"building {args.runs} runs: {timed(lambda: build(url, args.runs)):.1f} s")
        from bench.registry import Registry
        from bench.store import Store
        from leaderboard import claims, queries

        store, registry = Store.open(url, readonly=True), Registry.discover()
        board = timed(lambda: queries.leaderboard_rows(store, registry, task="performative"))
        print(f"query: leaderboard of one task   {board:.2f} s  (target < 1 s: ratio {board:.2f})")
        runs = timed(lambda: queries.runs_table(store, status="done"))
        print(f"query: run explorer (1000 rows) {runs:.2f} s  (target < 1 s: ratio {runs:.2f})")
        over = timed(lambda: claims.overview(store, registry))
        print(f"query: overview verdicts        {over:.2f} s  (target < 1 s: ratio {over:.2f})")

        import streamlit as st
        from streamlit.testing.v1 import AppTest

        os.environ["BENCH_DB_URL"] = url
        for view in ("overview", "task", "paper", "runs"):
            st.cache_data.clear()
            st.cache_resource.clear()
            app = AppTest.from_file(APP, default_timeout=300)
            app.query_params["view"] = view
            if view == "task":
                app.query_params["task"] = "performative"
            seconds = timed(app.run)
            print(f"app first render: {view:9s}     {seconds:.2f} s  (target < 2 s: ratio {seconds / 2:.2f})")


if __name__ == "__main__":
    main()
