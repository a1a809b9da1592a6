"""The `bench` command end to end, in subprocesses: outputs, stored rows, exit codes."""

import os
import sqlite3
import subprocess
import sys

import pytest

from tests.helpers import BENCH, default_sigint, run_bench

pytestmark = pytest.mark.integration  # the `bench` command as a subprocess

FAST = ["--set", "T=2000"]


def bench(*args, db=None, cwd=None, check=None):
    proc = run_bench(*args, db=db, cwd=cwd)
    if check is not None:
        assert proc.returncode == check, proc.stdout + proc.stderr
    return proc


def rows(db, sql="SELECT COUNT(*) FROM runs"):
    with sqlite3.connect(db) as connection:
        return connection.execute(sql).fetchall()


def test_list_is_discovered():
    out = bench("list", "methods", check=0).stdout
    for name in ("dicesgd", "pcsgd", "pcsgd_optimal_step", "sgd"):
        assert name in out
    assert "performative_strategic" in bench("list", "tasks", check=0).stdout
    assert "clipped-sgd-performative" in bench("list", "papers", check=0).stdout


def test_main_job_defaults_to_bench_db_and_stores_once(tmp_path):
    first = bench("run", "--method", "dicesgd", "--task", "performative", cwd=tmp_path, check=0)
    assert "final_gap = " in first.stdout
    db = tmp_path / "bench.db"
    assert rows(db) == [(1,)]
    gap = float(first.stdout.split("final_gap = ")[1].split()[0])
    assert 0 <= gap < 1e-2  # DiceSGD reaches θ_PS (no clipping bias)
    second = bench("run", "--method", "dicesgd", "--task", "performative", cwd=tmp_path, check=0)
    assert ("1 already done" in second.stderr
            and f"final_gap = {first.stdout.split('final_gap = ')[1].split()[0]}" in second.stdout)
    assert rows(db) == [(1,)]
    assert rows(db, "SELECT COUNT(*) FROM environments") == [(1,)]


def test_overrides_reach_the_stored_config(tmp_path):
    db = tmp_path / "b.db"
    bench("run", "-m", "pcsgd", "-t", "performative", "--seeds", "0-1", "--set", "c=0.5", "--set", "task.beta=0.05",
          *FAST, db=db, check=0)
    configs = rows(db, "SELECT method_config, task_config FROM runs")
    assert len(configs) == 2 and all('"c": 0.5' in m and '"beta": 0.05' in t for m, t in configs)


@pytest.mark.parametrize("args,message", [
    (["run", "-m", "dicesgdd", "-t", "performative"], "unknown method 'dicesgdd'; did you mean dicesgd"),
    (["run", "-m", "dicesgd", "-t", "perf"], "unknown task 'perf'"),
    (["run", "-m", "dicesgd", "-t", "performative", "--set", "cc=1"],
     "unknown config key 'cc' for dicesgd; valid keys: T: int"),
    (["run", "-m", "dicesgd", "-t", "performative", "--set", "T=fast"], "dicesgd.T='fast': expected int"),
    (["run", "-m", "dicesgd", "-t", "performative", "--set", "task.dim=20"],
     "unknown config key 'dim' for performative"),
    (["run", "-m", "dicesgd", "-t", "performative", "--hardware", "cuda"], "runs on cpu, not cuda"),
    (["run", "-m", "dicesgd", "-t", "performative", "--hardware", "tpu"], "runs on cpu, not tpu"),
    (["claims", "--paper", "clipped-sgd"], "unknown paper 'clipped-sgd'"),
    (["grid", "-m", "dicesgd", "-t", "performative", "--seeds", "9-1"], "bad seeds"),
    (["grid", "-m", "dicesgd", "-t", "performative", "--runner", "slurm"], "unknown runner 'slurm'; allowed: local"),
    (["run", "-m", "dicesgd"], "Missing option '--task'"),
    (["list", "solvers"], "'solvers' is not one of 'methods', 'tasks', 'papers'"),
    (["run", "-m", "dicesgd", "-t", "performative", "--sed", "1"], "No such option: --sed"),
])
def test_bad_input_is_one_line_exit_2_and_stores_nothing(tmp_path, args, message):
    db = tmp_path / "keep.db"
    bench("run", "-m", "sgd", "-t", "performative", *FAST, db=db, check=0)
    proc = bench(*args, db=db, check=2)
    assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert rows(db) == [(1,)]


def test_foreign_and_corrupt_databases_are_refused_untouched(tmp_path):
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER)")
    before = foreign.read_bytes()
    proc = bench("run", "-m", "dicesgd", "-t", "performative", *FAST, "--db", f"sqlite:///{foreign}", check=2)
    assert "not a bench database" in proc.stderr and foreign.read_bytes() == before
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello\n" * 100)
    proc = bench("status", "--db", f"sqlite:///{text_file}", check=2)
    assert "not a SQLite database" in proc.stderr and text_file.read_text() == "hello\n" * 100


def test_grid_stores_failures_and_timeouts_and_finishes_the_rest(tmp_path):
    """One cell raises (a task config the task rejects at build), one exceeds --timeout."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        "methods: [{name: sgd, config: {T: 2000}}, {name: pcsgd, config: {T: 2000}}, "
        "{name: dicesgd, config: {T: 50000000}}]\n"
        "tasks: [{name: performative, config: {m: 200}}, {name: performative, config: {beta: 0.2}}]\n"
        "seeds: 0\n"
    )
    db = tmp_path / "g.db"
    proc = bench("grid", "--file", str(grid), "--timeout", "3", "--workers", "2", db=db)
    assert proc.returncode == 1, proc.stderr  # like `run`: failures are stored, and the exit code tells a script
    assert "cells: 2 done, 3 failed, 1 timeout" in proc.stderr
    statuses = dict(((m, t), s)
                    for m, t, s in rows(db, "SELECT method, json_extract(task_config, '$.beta'), status FROM runs"))
    assert statuses[("dicesgd", 0.01)] == "timeout"  # 5e7 steps cannot finish in 3 s
    assert statuses[("sgd", 0.2)] == statuses[("pcsgd", 0.2)] == "failed"  # aβ = 2 > 1: no PS point
    assert statuses[("sgd", 0.01)] == statuses[("pcsgd", 0.01)] == "done"
    failed = rows(db, "SELECT error FROM runs WHERE status = 'failed'")
    assert all("Traceback" in e for (e,) in failed)
    assert "incompatible" not in proc.stderr


def test_show_status_export(tmp_path):
    db = tmp_path / "s.db"
    bench("run", "-m", "pcsgd", "-t", "performative", "--seeds", "0-2", *FAST, db=db, check=0)
    bench("run", "-m", "dicesgd", "-t", "performative", "--seeds", "0-2", *FAST, db=db, check=0)
    show = bench("show", db=db, check=0).stdout
    assert show.index("dicesgd") < show.index("pcsgd")  # ranked by final_gap, lower is better
    assert "95% CI" in show
    assert "done" in bench("status", db=db, check=0).stdout
    for fmt, marker in (("csv", "task,task_label"), ("json", '"mean"'), ("md", "| task |"),
                        ("latex", r"\begin{tabular}")):
        assert marker in bench("export", "--format", fmt, db=db, check=0).stdout
    out = tmp_path / "board.md"
    bench("export", "--format", "md", "-o", str(out), db=db, check=0)
    assert "dicesgd" in out.read_text()


def test_interrupted_grid_reruns_to_completion_without_duplicates(tmp_path):
    import signal
    import time

    db = tmp_path / "i.db"
    args = ["grid", "-m", "pcsgd", "-t", "performative", "--seeds", "0-59", "--set", "T=100000"]
    env = {**os.environ, "BENCH_DB_URL": f"sqlite:///{db}"}
    proc = subprocess.Popen([*BENCH, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=default_sigint)
    def stored() -> int:
        try:
            return rows(db)[0][0]
        except sqlite3.OperationalError:  # the file exists before its tables do
            return 0

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and stored() < 2:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted: every finished cell is stored" in err
    kept = rows(db)[0][0]
    assert 2 <= kept < 60
    rerun = bench(*args, db=db, check=0)
    assert f"{kept} already done" in rerun.stderr
    assert rows(db, "SELECT COUNT(*), COUNT(DISTINCT run_key), SUM(status = 'done') FROM runs") == [(60, 60, 60)]


def test_claims_piped_to_a_file_keep_a_line_or_two_per_claim(tmp_path):
    """Piped (no terminal, no COLUMNS), the table is PIPED_WIDTH wide, not rich's 80 columns."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "BENCH_DB_URL")}
    proc = subprocess.run([*BENCH, "claims", "--paper", "cmdp-bobw"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    claim_rows = [line for line in lines if line.split() and line.split()[0] in (
        "stochastic-violation-sqrt-t", "stochastic-regret-sqrt-t", "adversarial-violation-sqrt-t",
        "adversarial-reward-fraction", "unconstrained-linear-violation", "violation-below-unconstrained")]
    assert len(claim_rows) == 6  # each id whole on its row's first line
    assert len(lines) < 10 * 7 and max(map(len, lines)) <= 320


def test_claims_read_at_80_columns_and_wide_shows_the_reasons(tmp_path):
    """The compact layout keeps every claim id whole on its own line, and no line passes 80 columns; --wide is the
    table with the reasons."""
    env = {k: v for k, v in os.environ.items() if k != "BENCH_DB_URL"}
    compact = subprocess.run([*BENCH, "claims", "--paper", "cmdp-bobw"], capture_output=True, text=True,
                             env={**env, "COLUMNS": "80"}, cwd=tmp_path, timeout=300)
    assert compact.returncode == 0, compact.stderr
    lines = compact.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    ids = [line.split()[0] for line in lines if line.split() and line.split()[0].startswith(("stochastic-",
                                                                                               "adversarial-"))]
    assert ids == ["stochastic-violation-sqrt-t", "stochastic-regret-sqrt-t", "adversarial-violation-sqrt-t",
                   "adversarial-reward-fraction"]
    assert "measured at cpu-reduced" not in compact.stdout  # the reasons are --wide's
    wide = subprocess.run([*BENCH, "claims", "--paper", "cmdp-bobw", "--wide"], capture_output=True, text=True,
                          env={**env, "COLUMNS": "300"}, cwd=tmp_path, timeout=300)
    assert wide.returncode == 0 and "measured at cpu-reduced" in wide.stdout and "\nwhy:\n" in wide.stdout


@pytest.mark.parametrize("setting, shown", [(None, "False"), ("0", "True")])
def test_model_loading_bars_are_off_in_bench_unless_asked_for(setting, shown):
    """transformers' per-model "Loading weights" bars (dozens per grid) stay off the grid's progress line."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    if setting is not None:
        env["HF_HUB_DISABLE_PROGRESS_BARS"] = setting
    code = "import app.cli; from transformers.utils import logging; print(logging.is_progress_bar_enabled())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == shown, proc.stderr[-500:]


@pytest.mark.parametrize("args", [["run", "-m", "sft", "-t", "preference_world", "--set",
                                   "task.model=Qwen/Qwen2.5-0.5B"],
                                  ["grid", "-m", "sft", "-t", "preference_world", "--set",
                                   "task.model=Qwen/Qwen2.5-0.5B"]])
def test_a_hub_model_on_cpu_hardware_is_refused_unless_allowed(tmp_path, args):
    proc = bench(*args, db=tmp_path / "b.db")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "cells on hardware cpu name hub models (Qwen/Qwen2.5-0.5B)" in proc.stderr
    assert "use --hardware cuda on a GPU machine, or pass --allow-cpu" in proc.stderr
    assert not (tmp_path / "b.db").exists()


def test_claims_check_validates_every_claims_file():
    proc = bench("claims", "--check", check=0)
    for slug in ("clipped-sgd-performative", "best-of-n-kl", "cmdp-bobw"):
        assert f"{slug}: ok" in proc.stdout


def test_leaderboard_refuses_a_bad_store_before_starting(tmp_path):
    proc = bench("leaderboard", "--db", f"sqlite:///{tmp_path / 'missing.db'}", check=2)
    assert "no bench store" in proc.stderr and not (tmp_path / "missing.db").exists()


def _serve_leaderboard(db, *flags) -> tuple[str, str]:
    """`bench leaderboard` on a free port until its health check answers (and, with --verbose, Streamlit's banner is
    out), then stopped by its own pid: (stdout, stderr)."""
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "BENCH_DB_URL"}
    proc = subprocess.Popen([*BENCH, "leaderboard", "--db", f"sqlite:///{db}", "--port", str(port), *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    if answer.read() == b"ok":
                        break
            except OSError:
                pass
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.5)
        if "--verbose" in flags:  # the banner comes once the server runs: wait for it rather than for a time
            line = ""
            while "You can now view" not in line:
                line = proc.stdout.readline()
                assert line, "streamlit's banner never came"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=60)
    return out, err


def test_leaderboard_is_quiet_unless_verbose(tmp_path):
    db = tmp_path / "lb.db"
    bench("db", "upgrade", db=db, check=0)
    out, err = _serve_leaderboard(db)
    assert "leaderboard on http://127.0.0.1:" in err  # our own line says where
    assert "You can now view" not in out + err and "Uvicorn" not in out + err and "INFO" not in out + err
    out, err = _serve_leaderboard(db, "--verbose")
    assert "Uvicorn server started" in out + err


def test_jobs_uses_the_address_the_last_submit_used(tmp_path, monkeypatch):
    from app import cluster

    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    assert cluster.resolve_address(None) == cluster.DEFAULT_ADDRESS  # nothing remembered yet
    cluster.remember_address("http://127.0.0.1:1")
    assert (tmp_path / "ray_address").read_text() == "http://127.0.0.1:1\n"
    assert cluster.resolve_address(None) == "http://127.0.0.1:1" and cluster.resolve_address("http://h:2") == "http://h:2"
    env = {"BENCH_CACHE_DIR": str(tmp_path)}
    proc = run_bench("jobs", env=env, unset=("RAY_API_SERVER_ADDRESS",))
    assert proc.returncode == 2 and "cannot reach the Ray job API at http://127.0.0.1:1" in proc.stderr  # not 8265
    cluster.remember_address("http://admin:hunter2@127.0.0.1:1")  # a secret is never written
    assert "hunter2" not in (tmp_path / "ray_address").read_text()
    proc = run_bench("jobs", env=env, unset=("RAY_API_SERVER_ADDRESS",))
    assert proc.returncode == 2 and "had a secret, which is never stored: give --address" in proc.stderr
    assert "hunter2" not in proc.stderr


def test_a_submission_without_a_shared_store_names_every_store_that_works(tmp_path):
    proc = run_bench("submit", "--address", "http://127.0.0.1:1", "--", "list", "methods", cwd=tmp_path,
                     unset=("BENCH_DB_URL",))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    for store in ("needs a shared database, not 'sqlite:///bench.db'", "PostgreSQL", "postgresql+psycopg://",
                  "any SQLAlchemy PostgreSQL URL the cluster reaches", "absolute SQLite path (sqlite:////"):
        assert store in proc.stderr


def _alpacaeval_annotations(tmp_path):
    """Three models and the baseline on 30 instructions, as preferences.csv and as AlpacaEval annotations.json."""
    import json

    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    ref = rng.integers(20, 300, 30)
    frames, records = [], []
    for name, quality in (("gpt4_1106_preview", None), ("short", -1.0), ("long", 0.5), ("even", 0.0)):
        chars = ref.copy() if quality is None else np.maximum(1, ref + rng.integers(-150, 150, 30))
        pref = (np.full(30, 0.5) if quality is None
                else np.clip(1 / (1 + np.exp(-quality - (chars - ref) / 100)), 0, 1).round(6))
        frames.append(pd.DataFrame({"model": name, "index": range(30), "preference": pref, "model_output_chars": chars,
                                    "reference_output_chars": ref}))
        records += [{"instruction": f"q{i}", "output_1": "r" * int(ref[i]), "generator_1": "gpt4_1106_preview",
                     "output_2": "m" * int(chars[i]), "generator_2": name, "preference": 1.0 + float(pref[i])}
                    for i in range(30)]
    frame = pd.concat(frames, ignore_index=True)
    frame.to_csv(tmp_path / "preferences.csv.gz", index=False)
    (tmp_path / "annotations.json").write_text(json.dumps(records))
    return frame


def test_alpacaeval_scores_both_annotation_schemas_alike(tmp_path):
    import io

    import pandas as pd

    frame = _alpacaeval_annotations(tmp_path)
    from_csv = pd.read_csv(io.StringIO(bench("alpacaeval", str(tmp_path / "preferences.csv.gz"), "--csv",
                                             check=0).stdout),
                           index_col="model")
    from_json = pd.read_csv(io.StringIO(bench("alpacaeval", str(tmp_path / "annotations.json"), "--csv",
                                              check=0).stdout),
                            index_col="model")
    raw = frame.groupby("model")["preference"].mean() * 100
    assert (from_csv["win_rate"] - raw[from_csv.index]).abs().max() < 1e-3      # printed with 4 decimals
    assert from_csv.loc["gpt4_1106_preview", "lc_win_rate"] == 50.0 and from_csv.loc["even", "n_total"] == 30
    assert from_csv.loc["long", "win_rate"] > from_csv.loc["long", "lc_win_rate"] > from_csv.loc["short", "lc_win_rate"]
    pd.testing.assert_frame_equal(from_csv, from_json.loc[from_csv.index], atol=1e-3)
    table = bench("alpacaeval", str(tmp_path / "preferences.csv.gz"), check=0).stdout
    assert "LC win rate" in table and "short" in table and "±" in table


@pytest.mark.parametrize("content, message", [
    ("model,index,preference\nm,0,1\n", "lack column(s) model_output_chars, reference_output_chars"),
    ("model,index,preference,model_output_chars,reference_output_chars\nm,0,2,3,4\n", "preference must lie in [0, 1]"),
])
def test_alpacaeval_bad_annotations_are_one_line_errors(tmp_path, content, message):
    (tmp_path / "bad.csv").write_text(content)
    proc = bench("alpacaeval", str(tmp_path / "bad.csv"), check=2)
    assert proc.stderr.startswith("error: bad.csv: ") and message in proc.stderr and proc.stderr.count("\n") == 1
    proc = bench("alpacaeval", str(tmp_path / "none.json"), check=2)
    assert "annotation file" in proc.stderr and "not found" in proc.stderr
    proc = bench("alpacaeval", str(tmp_path / "bad.txt"), check=2)
    assert "expected .csv / .csv.gz files" in proc.stderr


def test_the_cli_isolates_every_cell_in_the_default_mode(tmp_path, monkeypatch):
    """One worker and no timeout still fork each cell from the CLI (a dying cell cannot take the grid down);
    the library's default keeps the in-process path for callers that ran torch themselves (runners/local.py)."""
    import runners.local
    from app import cli

    seen = []
    real = runners.local.run_cells

    def recording(*args, **kwargs):
        seen.append((kwargs.get("workers"), kwargs.get("timeout"), kwargs.get("isolate")))
        return real(*args, **kwargs)

    monkeypatch.setattr(runners.local, "run_cells", recording)
    monkeypatch.setattr(sys, "argv", ["bench", "run", "-m", "sgd", "-t", "performative", "--set", "T=200",
                                      "--db", f"sqlite:///{tmp_path / 'b.db'}"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 0 and seen == [(1, None, True)]
    assert rows(tmp_path / "b.db", "SELECT status FROM runs") == [("done",)]


SLEM_SMALL = ["run", "-m", "slem", "-t", "hetero_vocab_pairs", *[f"--set=task.{k}={v}" for k, v in {
    "prompts_per_kind": 1, "max_new_tokens": 4, "documents": 300, "train_steps": 40, "target_layers": 1,
    "target_width": 16, "drafter_layers": 1, "drafter_width": 8}.items()]]


def test_the_terminal_shows_progress_and_results_and_the_libraries_talk_into_the_run_log(tmp_path):
    """transformers warns while the tiny pair trains and decodes (a config key it does not know): the terminal
    shows the progress bar and the counts only, and `bench show-run` prints what was said, from the store."""
    db = tmp_path / "noise.db"
    run = run_bench(*SLEM_SMALL, db=db, timeout=600, env={"HOME": str(tmp_path),
                                                          "BENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert any((tmp_path / "cache" / "decoding").iterdir())  # the cell's process cached under $BENCH_CACHE_DIR
    printed = [line for line in run.stderr.replace("\r", "\n").splitlines() if line.strip()]
    assert printed and all(line.startswith("cells") for line in printed), printed
    key = rows(db, "SELECT run_key FROM runs")[0][0]
    shown = bench("show-run", key[:10], db=db, check=0).stdout
    assert "slem x hetero_vocab_pairs seed=0 [cpu]: done" in shown and "speedup = " in shown
    assert "log (library warnings and messages while it ran):" in shown and "[transformers" in shown
    assert bench("show-run", "abc", db=db, check=2).stderr.strip().endswith("give at least 8 characters of it")
    assert "no run has a key starting 'ffffffffff'" in bench("show-run", "ffffffffff", db=db, check=2).stderr


def test_show_ranks_only_like_with_like_and_marks_ties_and_low_seeds(tmp_path):
    from bench.registry import Registry
    from bench.store import Store
    from tests.leaderboard.test_queries import _save_gap

    db, registry = tmp_path / "h.db", Registry.discover()
    store = Store.open(f"sqlite:///{db}")
    _save_gap(store, registry, "sgd", [10.0, 11.0, 12.0, 11.0])  # CI [9.70, 12.30]
    _save_gap(store, registry, "pcsgd", [10.5, 11.5, 12.5])  # CI [9.02, 13.98]: overlaps sgd's, tied
    _save_gap(store, registry, "pcsgd", [1.0, 2.0], T=2000)  # a 2-seed pilot, better than both: its own table
    show = bench("show", db=db, check=0).stdout
    full, pilot = show.index("performative · T=100000"), show.index("performative · T=2000")
    rows = [line.split() for line in show[full:pilot].splitlines() if line.startswith("=")]
    assert [(r[0], r[1], r[2]) for r in rows] == [("=1", "sgd", "4"), ("=1", "pcsgd", "3")]
    assert "(low)" in show[full:pilot]  # pcsgd's 3 seeds against sgd's 4
    pilot_rows = [line.split() for line in show[pilot:].splitlines() if line.startswith("1 ")]
    assert [(r[1], r[3], r[4]) for r in pilot_rows] == [("pcsgd", "2", "(low)")]
