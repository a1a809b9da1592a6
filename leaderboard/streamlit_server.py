"""The process `bench leaderboard` becomes: Streamlit's own command line, with the overview computed while it starts.

    python -m leaderboard.streamlit_server run leaderboard/app.py --server.port ...   (as `streamlit run ...`)

A visitor's first page is the overview, whose verdicts took most of the first render (about 0.6 s of
0.8 s on a 20,000-run store, benchmarks/leaderboard_speed.py) when nothing was cached. Streamlit offers
no start-up hook, so this launcher starts a child process that computes the overview of the store named
by BENCH_DB_URL on the other core while this process starts the server and the browser loads the app's
scripts; a thread hands the child's rows to the overview page (leaderboard.ui.common.prefetched), whose
first render then only draws them. A child, not a thread: a thread computing here would hold the GIL
while the server starts and while the first session runs (measured: the heading came 0.4-0.8 s later).
A snapshot is used at most TTL_S seconds after the child started, the staleness the page's cache allows
anyway; one that fails or comes late is dropped and the page computes as it always did.

The store's URL stays in the environment, never on a command line (`ps` shows every user a command
line, a process's environment only to its owner).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time

PREFETCH = "--prefetch-overview"  # argv[1] of the child process


def unusable_address(address: str, port: int) -> str | None:
    """Why the server could not listen on address:port (a name that does not resolve, an address of another
    machine, a port in use), or None: checked by binding it, before `bench leaderboard` hands over to streamlit,
    whose own failure there is a 55-line traceback."""
    import socket

    try:
        found = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, ValueError, OSError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        return f"--address {address!r} is not an address or a host name that resolves ({why})"
    last: OSError | None = None
    for family, kind, proto, _, where in found:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
                probe.bind(where)
            return None
        except OSError as exc:
            last = exc
    why = last.strerror if last is not None and last.strerror else str(last)
    if last is not None and last.errno == 98:  # EADDRINUSE
        return f"--port {port}: something already listens on {address}:{port} ({why}); give another --port"
    return (f"--address {address!r}: cannot listen there ({why}); give an address of this machine, e.g. 127.0.0.1 "
            "or 0.0.0.0")


def compute_overview() -> bytes:
    """The child's work: the overview rows of BENCH_DB_URL's store, pickled (read only by the parent)."""
    from bench.registry import Registry
    from bench.store import Store
    from leaderboard import claims

    return pickle.dumps(claims.overview(Store.open(os.environ["BENCH_DB_URL"], readonly=True), Registry.discover()))


def hand_over(child: subprocess.Popen, url: str, started: float) -> None:
    """Wait for the child's rows (blocked on its pipe, the GIL free), then give them to the overview page."""
    data = child.stdout.read()
    if child.wait() != 0 or not data:
        return  # the page computes, and reports a bad store in its own words
    from leaderboard.ui.common import prefetched

    prefetched[url] = (started, pickle.loads(data))


def start_prefetch(url: str) -> None:
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "leaderboard.streamlit_server", PREFETCH],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=os.environ)
    threading.Thread(target=hand_over, args=(child, url, started), name="prefetch-overview", daemon=True).start()


def main() -> None:
    if sys.argv[1:] == [PREFETCH]:
        sys.stdout.buffer.write(compute_overview())
        return
    url = os.environ.get("BENCH_DB_URL")
    if url:
        start_prefetch(url)
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
