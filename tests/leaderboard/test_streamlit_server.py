"""`bench leaderboard`'s launcher: a child process computes the overview the page would, the launcher hands it over,
and the page takes it once, only while it is as fresh as its own cache allows."""

import os
import pickle
import subprocess
import sys

import pytest

from bench.registry import Registry
from bench.store import Store
from leaderboard import claims, streamlit_server
from leaderboard.ui import common, overview


@pytest.fixture(autouse=True)
def empty_prefetch():
    common.prefetched.clear()
    yield
    common.prefetched.clear()


def test_the_child_computes_the_overview_the_page_would(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store.open(url)
    child = subprocess.run([sys.executable, "-m", "leaderboard.streamlit_server", streamlit_server.PREFETCH],
                           env={**os.environ, "BENCH_DB_URL": url}, capture_output=True, check=True)
    rows = pickle.loads(child.stdout)
    here = claims.overview(Store.open(url, readonly=True), Registry.discover())
    assert [(r.slug, r.counts, r.by_scale, r.source) for r in rows] == \
           [(r.slug, r.counts, r.by_scale, r.source) for r in here]
    assert url not in child.args                                    # the URL travels in the environment only


def _child(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)


def test_hand_over_gives_the_childs_rows_to_the_page():
    rows = ["rows of the overview"]
    code = f"import pickle, sys; sys.stdout.buffer.write(pickle.dumps({rows!r}))"
    streamlit_server.hand_over(_child(code), "sqlite:///a.db", 12.5)
    assert common.prefetched == {"sqlite:///a.db": (12.5, rows)}


def test_a_failed_child_hands_over_nothing():
    streamlit_server.hand_over(_child("import sys; sys.exit(1)"), "sqlite:///a.db", 0.0)
    assert common.prefetched == {}


def test_the_page_takes_a_snapshot_once_and_never_an_old_one(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(overview.time, "monotonic", lambda: now[0])
    common.prefetched["u"] = (100.0 - common.TTL_S + 1, ["fresh"])
    assert overview._fresh_prefetch("u") == ["fresh"]
    assert overview._fresh_prefetch("u") is None                     # taken once
    common.prefetched["u"] = (100.0 - common.TTL_S, ["as old as the cache's TTL"])
    assert overview._fresh_prefetch("u") is None
    assert overview._fresh_prefetch("other store") is None
