"""What the browser checks share (tests/leaderboard/test_browser.py, benchmarks/screenshots.py,
benchmarks/leaderboard_speed.py): Debian's chromium (never a browser download of its own), `bench leaderboard` served
on a free loopback port, and a page waited on until Streamlit has finished running its script."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
UP_S = 50  # `bench leaderboard` answers its health check within this, or it failed


def chromium_installed() -> bool:
    """The binary is there and, where dpkg knows the package, configured (apt unpacks it before it configures it)."""
    if not os.path.exists(CHROMIUM):
        return False
    if shutil.which("dpkg-query") is None:
        return True
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "chromium"], capture_output=True, text=True).stdout
    return status in ("", "install ok installed")  # "": not from a package


def playwright_importable() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(env: dict[str, str], cwd: Path | None = None) -> Iterator[str]:
    """`bench leaderboard` on a free loopback port with `env` (BENCH_DB_URL names the store), run in `cwd`; yields
    its base URL once it answers, and stops it after."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "bench", "leaderboard", "--port", str(port)], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + UP_S
        while True:
            try:
                urllib.request.urlopen(f"{base}/_stcore/health", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"bench leaderboard did not come up in {UP_S} s") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextmanager
def chromium() -> Iterator:
    """Headless chromium through playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def shown(page, selector: str, timeout_ms: int = 300_000) -> None:
    """Wait until an element matching `selector` is laid out on the page, checked on every animation frame. For a
    timing: a locator's wait polls with a backoff (0, 20, 50, 100, 100, then every 500 ms), which added up to half a
    second to a page that took longer than a quarter of one."""
    page.wait_for_function("s => [...document.querySelectorAll(s)].some(e => e.getClientRects().length > 0)",
                           arg=selector, polling="raf", timeout=timeout_ms)


def settled(page, timeout_ms: int = 120_000, pause_ms: int = 500) -> None:
    """Wait until Streamlit has finished running the page's script (its status widget gone); `pause_ms` before and
    after, for a script that has not started yet (0 where something the script draws was already waited for)."""
    page.wait_for_timeout(pause_ms)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)
    page.wait_for_timeout(pause_ms)
