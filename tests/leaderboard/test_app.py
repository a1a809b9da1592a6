"""AppTest smoke tests of every page of the Streamlit app, on a small real store."""

import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import text
from streamlit.testing.v1 import AppTest

from bench.cells import Entry, expand
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import VERDICTS, load_paper
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


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A store holding the clipped-SGD paper's CPU-scale claims and controls at their seeds (about 35 CPU-s)."""
    from leaderboard.claims import CPU_SCALES, paper_cells

    registry = Registry.discover()
    paper = load_paper(registry, "clipped-sgd-performative")
    paper = replace(paper, claims=[c for c in paper.claims if c.scale in CPU_SCALES])
    path = tmp_path_factory.mktemp("stored") / "stored.db"
    run_cells(paper_cells(paper, registry), Store.open(f"sqlite:///{path}"), registry)
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


def _first_table(app, first_column: str) -> list[dict[str, str]]:
    """The rows (column -> cell text) of the first HTML table the page draws whose first header is `first_column`."""
    from html.parser import HTMLParser

    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.cell = ""

        def handle_endtag(self, tag):
            if tag in ("td", "th"):
                self.rows[-1].append(self.cell)
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    for markdown in app.markdown:
        if f"<th>{first_column}</th>" in markdown.value:
            parser = Rows()
            parser.feed(markdown.value)
            header, *body = parser.rows
            return [dict(zip(header, row, strict=True)) for row in body]
    raise AssertionError(f"no table whose first column is {first_column!r}")


def _text(app) -> str:
    return "\n".join(m.value for m in app.markdown)


def test_overview_is_a_leaderboard_of_verdict_bars_with_totals_and_links(url, monkeypatch):
    app = _run(url, monkeypatch)
    text = _text(app)
    from leaderboard.lock import read_lock

    # the stored runs (T = 2000) are none of the claims' cells: every paper shows its lock's reference run
    lock = read_lock("clipped-sgd-performative")
    claims = {c.id for c in load_paper(Registry.discover(), "clipped-sgd-performative").claims if c.role == "claim"}
    locked = [c.verdict for cid, c in lock.claims.items() if cid in claims]  # not its sanity checks or controls
    row = text[text.index("?view=paper&amp;paper=clipped-sgd-performative"):]
    row = row[:row.index("</tr>")]
    words = ", ".join(f"{locked.count(v)} {v}" for v in ("reproduced", "partially", "not reproduced",
                                                         "uninformative") if locked.count(v))
    assert words in row and "reference run" in row and "target='_self'" in text
    assert f"{len(Registry.discover().papers())} papers," in text  # every registered paper
    assert "CPU-measured (" in text and "Paper-scale (" in text
    assert dict(app.query_params) == {"view": "overview"}


def test_overview_sorts_and_keeps_the_sort_in_the_url(url, monkeypatch):
    app = _run(url, monkeypatch, sort="paper")
    text = _text(app)
    slugs = [s for s in Registry.discover().papers()]
    positions = [text.index(f"paper={s}'") for s in slugs]
    assert positions == sorted(positions)
    assert app.query_params["sort"] == "paper"


def test_task_page_ranks_methods_with_intervals_and_describes_the_metric(url, monkeypatch):
    app = _run(url, monkeypatch, view="task", task="performative")
    frame = _first_table(app, "rank")
    assert [row["method"] for row in frame] == ["dicesgd [reconstructed]", "pcsgd [reconstructed]"]  # lower first
    assert [row["rank"] for row in frame] == ["1", "2"] and [row["n"] for row in frame] == ["3", "3"]
    assert any("squared distance to the performative-stable point" in c.value for c in app.caption)
    assert any("final_gap (lower is better)" in h.value for h in app.subheader)
    assert app.get("plotly_chart")


def test_task_page_shows_every_stored_metric_when_asked_and_keeps_it_in_the_url(url, monkeypatch):
    """Off by default (the family's primary metric); metrics=all adds a table per declared metric the runs stored,
    e.g. lm-evaluation-harness's scores beside a family's own."""
    primary = {h.value for h in _run(url, monkeypatch, view="task", task="performative").subheader}
    assert not any("stationarity" in h for h in primary)
    app = _run(url, monkeypatch, view="task", task="performative", metrics="all")
    shown = {h.value for h in app.subheader}
    assert any("final_gap (lower is better)" in h for h in shown) and any("stationarity" in h for h in shown)
    assert app.query_params["metrics"] == "all" and app.toggle[0].value


def _plotted_metric(app: AppTest) -> str:
    import json

    (chart,) = app.get("plotly_chart")  # one plot on the page, whatever the number of groups
    return json.loads(chart.proto.spec)["layout"]["yaxis"]["title"]["text"]


def test_task_page_plots_one_group_chosen_on_the_page_and_kept_in_the_url(url, monkeypatch):
    app = _run(url, monkeypatch, view="task", task="performative", metrics="all")
    (chooser,) = [s for s in app.selectbox if s.label == "plot the group"]
    titles = [h.value.split(" [")[0].split(" (")[0] for h in app.subheader]
    assert list(chooser.options) == titles and len(titles) >= 2
    assert _plotted_metric(app) == titles[0].split(" — ")[1] and "plot" not in app.query_params
    second = _run(url, monkeypatch, view="task", task="performative", metrics="all", plot=titles[1])
    assert _plotted_metric(second) == titles[1].split(" — ")[1] and second.query_params["plot"] == titles[1]
    gone = _run(url, monkeypatch, view="task", task="performative", metrics="all", plot="a group no filter shows")
    assert _plotted_metric(gone) == titles[0].split(" — ")[1] and "plot" not in gone.query_params


def test_task_page_defaults_to_a_task_with_runs_and_refuses_unknown_names(url, monkeypatch):
    app = _run(url, monkeypatch, view="task")
    assert app.query_params["task"] == "performative"  # the only task with runs, though not the first by name
    assert "unknown task 'nope'" in _run(url, monkeypatch, view="task", task="nope").error[0].value
    assert "unknown view 'bogus'" in _run(url, monkeypatch, view="bogus").error[0].value


def test_single_seeds_and_references_are_not_ranked_and_ties_share_a_rank():
    from leaderboard.queries import BoardRow
    from leaderboard.ui.task import ranked

    def row(method, n, mean, lo, hi, reference="", low=False):
        return BoardRow("t", "", method, "", "cpu", "error", False, n, mean, 0.1, lo, hi, "t", setting_key=method,
                        reference=reference, low_seeds=low, most_seeds=3)

    rows = ranked([row("bon_exact", 3, 0.0, 0.0, 0.0, reference="the exact distribution"), row("a", 3, 1.0, 0.9, 1.1),
                   row("b", 2, 1.05, 1.0, 1.1, low=True), row("c", 1, 0.5, 0.5, 0.5, low=True),
                   row("d", 3, 2.0, 1.9, 2.1)])
    assert [r["rank"] for r in rows] == ["ref.", "=1", "=1", "—", "3"]  # a and b overlap: one rank; d is third
    assert [r["note"] for r in rows] == ["reference: the exact distribution", "tied at #1 (95 % CIs overlap)",
                                         "tied at #1 (95 % CIs overlap); low seeds (2 of 3)", "1 seed: not ranked", ""]


def _renamed(url, tmp_path, sql: str) -> str:
    """A copy of the store at `url` with `sql` applied: runs of a method or task whose file is gone."""
    import sqlite3

    copy = tmp_path / "renamed.db"
    with sqlite3.connect(url.removeprefix("sqlite:///")) as source, sqlite3.connect(copy) as target:
        source.backup(target)  # with what the write-ahead log still holds
    with Store.open(f"sqlite:///{copy}").engine.begin() as connection:
        connection.execute(text(sql))
    return f"sqlite:///{copy}"


def test_a_method_no_longer_registered_is_a_note_and_refresh_reads_the_registry_again(url, monkeypatch, tmp_path):
    from bench.registry import Listing

    ghost = _renamed(url, tmp_path, "UPDATE runs SET method = 'ghostsgd' WHERE method = 'dicesgd'")
    app = _run(ghost, monkeypatch, view="task", task="performative")
    frame = {row["method"]: row for row in _first_table(app, "rank")}
    assert set(frame) == {"ghostsgd", "pcsgd [reconstructed]"} and frame["ghostsgd"]["n"] == "3"
    assert "method no longer registered" in frame["ghostsgd"]["note"]
    assert "no longer registered" not in frame["pcsgd [reconstructed]"]["note"]
    # the method file appears while the server runs: the refresh button reads the registry again
    original = Registry.discover

    def with_ghost(cls, **kw):
        found = original(**kw)
        return Registry([*found.listings, Listing("method", "ghostsgd", "performative", "methods.performative.dicesgd",
                                                  "", "builtin")])

    monkeypatch.setattr(Registry, "discover", classmethod(with_ghost))
    app.sidebar.button[0].click().run()
    assert not app.exception, [e.value for e in app.exception]
    frame = {row["method"]: row for row in _first_table(app, "rank")}
    assert "no longer registered" not in frame["ghostsgd"]["note"]


def test_registry_files_change_when_a_method_file_is_added(tmp_path):
    from leaderboard.ui.common import registry_files

    (tmp_path / "methods" / "toy").mkdir(parents=True)
    (tmp_path / "methods" / "toy" / "a.py").write_text("x = 1\n")
    before = registry_files(tmp_path)
    assert [f[0] for f in before] == ["methods/toy/a.py"]
    (tmp_path / "methods" / "toy" / "b.py").write_text("x = 2\n")
    assert [f[0] for f in registry_files(tmp_path)] == ["methods/toy/a.py", "methods/toy/b.py"]


def test_a_task_no_longer_registered_is_a_note(url, monkeypatch, tmp_path):
    gone = _renamed(url, tmp_path, "UPDATE runs SET task = 'gone_task' WHERE method = 'pcsgd'")
    app = _run(gone, monkeypatch, view="task")
    assert app.query_params["task"] == "performative"  # the first registered task with runs
    assert any("tasks no longer registered (not ranked): gone_task" in c.value for c in app.caption)
    assert [row["method"] for row in _first_table(app, "rank")] == ["dicesgd [reconstructed]"]
    app = _run(gone, monkeypatch, view="task", task="gone_task")
    assert "'gone_task' has stored runs but is no longer registered" in app.warning[0].value
    assert "?view=runs&amp;task=gone_task" in _text(app)
    runs = _run(gone, monkeypatch, view="runs", task="gone_task")  # the link: its runs, though the task is gone
    assert set(runs.dataframe[0].value["task"]) == {"gone_task"} and len(runs.dataframe[0].value) == 4


@pytest.mark.parametrize("view", ["overview", "task", "paper", "runs"])
def test_every_page_links_every_view_at_its_top(url, monkeypatch, view):
    app = _run(url, monkeypatch, view=view)
    top = next(m.value for m in app.markdown if "class='topnav'" in m.value)  # no sidebar needed at 400 px
    for other in ("overview", "task", "paper", "runs"):
        assert (f"<b>{other}</b>" if other == view else f"href='?view={other}' target='_self'>{other}</a>") in top
    assert "overflow-x: auto" in _text(app)  # wide tables scroll inside a narrow column


def _cards(text: str) -> list[str]:
    """The claim ids of the page's cards, top to bottom."""
    return re.findall(r"<div class='card[^']*' id='claim-([^']+)'>", text)


def test_paper_page_shows_one_card_per_claim_and_the_reference_run(url, monkeypatch):
    app = _run(url, monkeypatch, view="paper", paper="clipped-sgd-performative")
    text = _text(app)
    paper = load_paper(Registry.discover(), "clipped-sgd-performative")
    assert sorted(_cards(text)) == sorted(c.id for c in paper.claims)  # one card each, no second list
    assert not app.dataframe
    assert any("Nothing of this paper is stored here" in c.value for c in app.caption)
    assert app.query_params["paper"] == "clipped-sgd-performative"


def test_paper_page_opens_with_the_verdict_count_then_claims_then_controls(url, monkeypatch):
    """The first things on the page are the title and the verdicts counted (as the lock has them), then the claims;
    the world's positive controls come after them, the sanity checks last."""
    from leaderboard.lock import read_lock

    app = _run(url, monkeypatch, view="paper", paper="logo")
    paper = load_paper(Registry.discover(), "logo")
    lock = read_lock("logo")
    top = next(e for e in app.main if type(e).__name__ == "Block")  # after the style and the links to every view
    assert top.children[0].value == paper.title  # the header, above the selectors
    summary = top.children[1].value
    for scale, scales in (("CPU scale", ("cpu-full", "cpu-reduced")), ("paper scale", ("paper-scale",))):
        claims = [c for c in paper.claims if c.role == "claim" and c.scale in scales]
        verdicts = [lock.claims[c.id].verdict if c.id in lock.claims else "not run" for c in claims]
        words = ", ".join(f"{verdicts.count(v)} {v}" for v in VERDICTS if verdicts.count(v))
        assert f"{scale}, {len(claims)} claim{'s' if len(claims) != 1 else ''}: {words}" in summary
    order = _cards(_text(app))
    roles = [next(c.role for c in paper.claims if c.id == cid) for cid in order]
    assert roles == sorted(roles, key=["claim", "control", "check"].index)  # claims, then controls, then checks
    assert roles[0] == "claim" and "control" in roles
    headings = [h.value for h in app.subheader]
    assert headings.index("The paper's claims") < next(i for i, h in enumerate(headings) if h.startswith("Can this"))
    assert any(e.label == "reproduction report (docs/papers/logo.md)" for e in app.expander)  # after the cards
    assert any("## Claims and verdicts" in m.value for m in app.markdown)


def test_cards_put_the_papers_number_beside_ours_and_label_fragile_and_underpowered(url, monkeypatch):
    from leaderboard.lock import read_lock

    text = _text(_run(url, monkeypatch, view="paper", paper="logo"))
    cards = dict(zip(_cards(text), re.split(r"<div class='card[^']*' id='claim-[^']+'>", text)[1:], strict=True))
    assert "<span class='badge label'>fragile</span>" in cards["logo-m2-not-worse-than-simpo"]
    labelled = 0
    for cid, locked in read_lock("logo").claims.items():
        needed = (locked.evidence or {}).get("seeds_needed")
        if cid in cards and needed is not None:
            assert f"<span class='badge label'>needs {needed} seeds</span>" in cards[cid]
            labelled += 1
    assert labelled
    text = _text(_run(url, monkeypatch, view="paper", paper="clipped-sgd-performative"))
    card = text[text.index("id='claim-plot-pcsgd-plateau-beta-0.01'"):]
    row = card[card.index("<tr><td>"):card.index("</table>")]
    # the paper's 0.9 beside our locked 3.53 ± 0.004 over 20 seeds
    assert "<td>0.9 (approx.)</td>" in row and "± " in row and "(n = 20)" in row


def test_a_claim_has_a_deep_link_that_opens_it_first_and_stays_in_the_url(url, monkeypatch):
    text = _text(_run(url, monkeypatch, view="paper", paper="clipped-sgd-performative"))
    assert "href='?view=paper&amp;paper=clipped-sgd-performative&amp;claim=dicesgd-rate-1-over-t'" in text
    app = _run(url, monkeypatch, view="paper", paper="clipped-sgd-performative", claim="dicesgd-rate-1-over-t")
    assert app.query_params["claim"] == "dicesgd-rate-1-over-t"  # survives the page's own URL rewrite
    cards = _cards(_text(app))
    assert cards[0] == "dicesgd-rate-1-over-t" and cards.count("dicesgd-rate-1-over-t") == 1
    assert "<div class='card linked' id='claim-dicesgd-rate-1-over-t'>" in _text(app)
    opened = [e for e in app.expander if e.label.startswith("dicesgd-rate-1-over-t:")]
    assert len(opened) == 1 and opened[0].proto.expanded
    app = _run(url, monkeypatch, view="paper", paper="clipped-sgd-performative", claim="no-such-claim")
    assert "has no claim 'no-such-claim'" in app.warning[0].value and "claim" not in app.query_params


def test_paper_page_of_a_stored_paper_shows_intervals_plots_and_run_links(stored, monkeypatch):
    app = _run(stored, monkeypatch, view="paper", paper="clipped-sgd-performative", scale="cpu")
    text = _text(app)
    assert "± " in text and "(n = 20" in text  # mean ± 95 % CI over the claim's 20 seeds
    assert "target='_self'>" in text and "?view=runs&run_key=" in text
    assert len(app.get("plotly_chart")) >= 5  # every stored claim that has a shape, open
    assert "paper-scale" not in {b for b in text.split("<span class='badge'>")[1:] for b in [b.split("<")[0]]}


def test_unknown_paper_is_a_message(url, monkeypatch):
    app = _run(url, monkeypatch, view="paper", paper="no-such-paper")
    assert "unknown paper 'no-such-paper'" in app.error[0].value


def test_runs_explorer_pages_filters_and_shows_the_traceback(url, monkeypatch):
    app = _run(url, monkeypatch, view="runs")
    frame = app.dataframe[0].value
    assert len(frame) == 7 and frame["run"].str.len().max() == 10 and "final_gap" in frame.columns
    assert any("runs 1–7 of 7" in c.value for c in app.caption)
    app = _run(url, monkeypatch, view="runs", status="failed")
    frame = app.dataframe[0].value
    assert list(frame["status"]) == ["failed"] and list(frame["task config"]) == ["beta=0.5"]
    assert any("ValueError" in c.value for c in app.code)
    assert app.get("download_button") and app.query_params["status"] == "failed"
    assert "no run with key 'deadbeef'" in _run(url, monkeypatch, view="runs", run_key="deadbeef").error[0].value


def test_a_run_is_found_by_its_key_prefix_and_shows_its_curves(url, monkeypatch):
    store = Store.open(url)
    key = next(k for k, in store.engine.connect().execute(text("SELECT run_key FROM runs WHERE status = 'done'")))
    app = _run(url, monkeypatch, view="runs", run_key=key[:12])
    assert app.query_params["run_key"] == key
    assert any(key in c.value for c in app.caption)
    assert app.get("plotly_chart")  # the run's own curves


def test_empty_store_says_so(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    Store.open(url)
    app = _run(url, monkeypatch)
    assert any("show their verdict lock" in i.value for i in app.info)


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
    assert "typo-paper: its claims file cannot be used" in overview.error[0].value
    assert "unknown method 'dicesdg'" in overview.error[0].value


def test_a_statement_is_shown_literally_never_as_markdown_or_html(url, monkeypatch, tmp_path):
    good = Path(__file__).resolve().parents[2] / "leaderboard" / "papers" / "clipped-sgd-performative.yaml"
    source = good.read_text()
    statement = next(line for line in source.splitlines()
                     if line.strip().startswith("statement:") and line.split("statement:")[1].strip()[:1] in "\"'")
    (tmp_path / "clipped-sgd-performative.yaml").write_text(source.replace(
        statement, statement.split("statement:")[0] + 'statement: "‖z−z*‖² and ‖x*‖ <b>bold</b> $x$"', 1))
    original = Registry.discover
    monkeypatch.setattr(Registry, "discover",
                        classmethod(lambda cls, **kw: replace(original(**kw), papers_dir=tmp_path)))
    text = _text(_run(url, monkeypatch, view="paper", paper="clipped-sgd-performative"))
    assert "‖z−z&#42;‖² and ‖x&#42;‖ &#60;b&#62;bold&#60;/b&#62; &#36;x&#36;" in text

