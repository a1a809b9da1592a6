"""What several test modules share: the fixtures folder, the `bench` command as a subprocess, and the SIGINT
disposition of a driver a test interrupts. (Fixtures live in conftest.py files; plain helpers here.)"""

import os
import signal
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
BENCH = [sys.executable, "-m", "bench"]


def run_bench(*args: str, db=None, url: str | None = None, cwd=None, env: dict | None = None, columns: int = 200,
              unset: tuple[str, ...] = (), timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m bench ARGS`, output captured as text, on the store `db` (a SQLite path) or `url` (any store URL);
    neither: whatever BENCH_DB_URL `env` gives, else none (this process's own is never passed on). `env` is laid
    over this process's environment, and the variables in `unset` are removed."""
    merged = {k: v for k, v in os.environ.items() if k != "BENCH_DB_URL" and k not in unset}
    merged.update({"COLUMNS": str(columns), **(env or {})})
    if db is not None:
        merged["BENCH_DB_URL"] = f"sqlite:///{db}"
    if url is not None:
        merged["BENCH_DB_URL"] = url
    return subprocess.run([*BENCH, *args], capture_output=True, text=True, env=merged, cwd=cwd, timeout=timeout)


def default_sigint() -> None:
    """preexec_fn of a driver a test interrupts with SIGINT: the default disposition, so its Python raises
    KeyboardInterrupt even when the test run itself was started in the background (shells start background jobs
    with SIGINT ignored, and an ignored disposition is inherited through exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def smallest_refusal_problem(cache_root: Path):
    """The safety world (refusal_finetune) at its smallest settings, its tiny models cached under `cache_root` (the
    run context's cache root): the problem the safety method, oracle and scorer tests share."""
    from bench.context import RunContext
    from tasks.safety import refusal_finetune

    config = refusal_finetune.Config(**refusal_finetune.SMALLEST)
    return refusal_finetune.build(config, RunContext(0, cache_root=cache_root).for_task())
