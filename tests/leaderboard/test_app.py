"""AppTest smoke tests of every page of the Streamlit app, on a small real store."""

import sys
from dataclasses import replace
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import text
from streamlit.testing.v1 import AppTest

from bench.registry import Registry
from bench.store import Store
from bench.cells import Entry, expand
from runners.local import run_cells

pytestmark = pytest.mark.integration  # the Streamlit app

APP = str(Path(__file__).resolve().parents[2] / "leaderboard" / "app.py")


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    """A store with pcsgd and dicesgd (3 seeds, T = 2000) and one failed run."""
    registry = Registry.discover()
    path = tmp_path_factory.mktemp("app") / "app.db"
    store = Store.open(f"sqlite:///{path}")
    grid = expand(registry, [Entry("pcsgd", {"T": 2000}), Entry("dicesgd", {"T": 2000})], [Entry("performative")],
                  [0, 1, 2], ["cpu"])
    failing = expand(registry, [Entry("pcsgd", {"T": 2000})], [Entry("performative", {"beta": 0.5})], [0], ["cpu"])
    run_cells(grid.cells + failing.cells, store, registry)
    return f"sqlite:///{path}"


def _run(url, monkeypatch, **params) -> AppTest:
    monkeypatch.setenv("BENCH_DB_URL", url)
    # AppTest leaves the app script as __main__, which processes spawned later (multiprocessing's
    # "spawn", as in test_store_postgres) would re-run: the real one is put back after the test
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    st.cache_data.clear()
    st.cache_resource.clear()
    app = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_overview_lists_every_paper_with_verdict_counts(url, monkeypatch):
    app = _run(url, monkeypatch)
    frame = app.dataframe[0].value
    assert "clipped-sgd-performative" in set(frame["paper"])
    row = frame[frame["paper"] == "clipped-sgd-performative"].iloc[0]
    # the stored runs (T = 2000) are none of the claims' cells: the paper shows its lock's reference run
    from leaderboard.lock import read_lock

    locked = [c.verdict for cid, c in read_lock("clipped-sgd-performative").claims.items()
              if cid not in ("pcsgd-bias-grows-with-beta", "bias-amplification")]  # the two sanity checks
    assert row["shown"] == "reference run" and row["checks"] == 2
    assert [row[v] for v in ("reproduced", "not reproduced", "uninformative")] == \
        [locked.count(v) for v in ("reproduced", "not reproduced", "uninformative")]
    assert any("clipped-sgd-performative" in m.value for m in app.markdown)


def test_task_page_ranks_methods_with_intervals(url, monkeypatch):
    app = _run(url, monkeypatch, view="task", task="performative")
    frame = app.dataframe[0].value
    assert list(frame["method"]) == ["dicesgd", "pcsgd"]  # final_gap, lower is better
    assert list(frame["n"]) == [3, 3] and (frame["ci_low"] <= frame["mean"]).all()
    assert app.get("plotly_chart")


def test_paper_page_shows_verdicts_and_links_to_runs(url, monkeypatch):
    app = _run(url, monkeypatch, view="paper", paper="clipped-sgd-performative")
    verdicts = app.dataframe[1].value
    assert len(verdicts) == 13  # 11 claims and 2 sanity checks
    assert set(verdicts["shown"]) == {"reference"}  # none of the claims' cells is stored: the lock's reference run
    assert any("Nothing of this paper is stored here" in i.value for i in app.info)
    assert any("?view=runs&run_key=" in m.value for m in app.markdown)


def test_paper_page_renders_the_reproduction_report_and_marks_the_world_control(url, monkeypatch):
    app = _run(url, monkeypatch, view="paper", paper="logo")
    assert any(e.label == "reproduction report (docs/papers/logo.md)" for e in app.expander)
    assert any("## Claims and verdicts" in m.value for m in app.markdown)
    verdicts = app.dataframe[1].value
    kinds = dict(zip(verdicts["claim"], verdicts["kind"]))
    assert kinds["long-context-training-shows-a-gain"] == "control: ordering"
    assert kinds["logo-beats-sft-long-context"] == "ordering"


def test_unknown_paper_is_a_message(url, monkeypatch):
    app = _run(url, monkeypatch, view="paper", paper="no-such-paper")
    assert "unknown paper 'no-such-paper'" in app.error[0].value


def test_runs_explorer_filters_and_shows_the_traceback(url, monkeypatch):
    app = _run(url, monkeypatch, view="runs")
    assert len(app.dataframe[0].value) == 7
    app.selectbox[2].set_value("failed").run()
    frame = app.dataframe[0].value
    assert list(frame["status"]) == ["failed"]
    assert any("ValueError" in c.value for c in app.code)
    assert app.get("download_button")


def test_empty_store_says_so(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    Store.open(url)
    app = _run(url, monkeypatch)
    assert any("No runs stored yet" in i.value for i in app.info)


def test_old_schema_and_missing_store_are_messages(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = Store.open(url)
    with store.engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0001_initial'"))  # a revision this code
                                                                                             # knows
    assert "bench db upgrade" in _run(url, monkeypatch).error[0].value
    assert "no bench store" in _run(f"sqlite:///{tmp_path / 'none.db'}", monkeypatch).error[0].value
    assert not (tmp_path / "none.db").exists()  # the app never creates or writes a database


def test_claims_file_with_a_typo_is_reported_on_its_page(url, monkeypatch, tmp_path):
    good = Path(__file__).resolve().parents[2] / "leaderboard" / "papers" / "clipped-sgd-performative.yaml"
    (tmp_path / "typo-paper.yaml").write_text(good.read_text().replace("method: dicesgd, task",
                                                                       "method: dicesdg, task", 1))
    original = Registry.discover
    monkeypatch.setattr(Registry, "discover",
                        classmethod(lambda cls, **kw: replace(original(**kw), papers_dir=tmp_path)))
    app = _run(url, monkeypatch, view="paper", paper="typo-paper")
    assert "unknown method 'dicesdg'" in app.error[0].value
    overview = _run(url, monkeypatch)
    assert "unknown method 'dicesdg'" in overview.dataframe[0].value["problem"].iloc[0]
