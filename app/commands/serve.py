"""`bench leaderboard`: the Streamlit app (read-only) over the store, served on this machine."""

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from app import prepare
from app.console import err
from app.options import ASCII_INT, DbOption, VerboseOption
from bench.errors import BenchError

APP_PATH = Path(__file__).resolve().parents[2] / "leaderboard" / "app.py"


def leaderboard(
    db: DbOption = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.", click_type=ASCII_INT)] = 8501,
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    verbose: VerboseOption = False,
) -> None:
    """Serve the Streamlit leaderboard (read-only) over the store."""
    from bench.store import Store, mask_url, resolve_url

    if not 1 <= port <= 65535:
        raise BenchError(f"--port {port}: give a TCP port in 1-65535")
    if not address.strip():
        raise BenchError("--address is empty; give an address to listen on, e.g. 127.0.0.1")
    from leaderboard.streamlit_server import unusable_address

    problem = unusable_address(address, port)
    if problem:
        raise BenchError(problem)
    url = resolve_url(db)
    if prepare.default_store_missing(url):
        Store.open(url)  # a fresh checkout: an empty default store, so the app shows the verdict locks' reference runs
        err.print("created an empty store ./bench.db: the leaderboard shows each paper's locked reference run")
    Store.open(url, readonly=True)  # a bad or foreign database is a one-line error here, not in the browser
    # `streamlit run`, through a launcher that warms the overview's cache while the server starts
    command = [sys.executable, "-m", "leaderboard.streamlit_server", "run", str(APP_PATH), "--server.port", str(port),
               "--server.address", address, "--server.headless", "true", "--browser.gatherUsageStats", "false",
               "--client.toolbarMode", "minimal",  # a read-only app: no Deploy button or developer menu
               # no watching of the app's sources: after every run of a page Streamlit's watcher resolved the paths
               # of every imported module on the server's event loop (0.3 s a page at 100k runs, as long as the page's
               # query) to offer "rerun on save" of the app's own edited modules (it watches leaderboard/ alone).
               # New method, task and claims files are the app's own concern: it reads them again within a second
               # (leaderboard/ui/common.py, files_now)
               "--server.fileWatcherType", "none",
               # no full garbage collection after each run of a page: Streamlit's collect(2) over the ~2 M objects of
               # a server with the pages' libraries loaded held the GIL ~0.1 s, just as the page's last messages were
               # due to leave; Python's own generational collection still runs
               "--runner.postScriptGC", "false"]
    if not verbose:  # our own line below says where it listens: no Streamlit banner, no Uvicorn start-up lines
        command += ["--logger.hideWelcomeMessage", "true", "--logger.level", "error"]
    # the URL (and its password) goes to streamlit in its own environment, never on its command
    # line: `ps` shows every user a command line, but a process's environment only to its owner
    env = {**os.environ, "BENCH_DB_URL": url}
    env.pop("BENCH_DB_PASSWORD_FILE", None)  # the URL is complete now
    err.print(f"leaderboard on http://{address}:{port} (store {mask_url(url)}); Ctrl-C stops it",
              highlight=False, markup=False, soft_wrap=True)
    sys.stdout.flush()
    os.execve(sys.executable, command, env)  # streamlit takes this process over: signals reach it directly
