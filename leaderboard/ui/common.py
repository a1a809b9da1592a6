"""What every page shares: the cached store, registry and queries, links that stay in the tab, the URL's state,
and text made safe to render (a statement's `*` or `$` is not Markdown or LaTeX here)."""

from __future__ import annotations

import hashlib
import html
import os
import sys
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from bench.registry import Registry
from bench.store import Store, resolve_url

VIEWS = ("overview", "task", "paper", "runs")
TTL_S = 10  # new runs appear within this many seconds (or at once with the refresh button)
FILES_TTL_S = 1  # a method, task or claims file added or changed is seen within this many seconds
# url -> (time.monotonic() when its computation began, overview rows): the launcher's head start
# (leaderboard.streamlit_server), taken once by the overview page; the refresh button drops it with the caches
prefetched: dict[str, tuple[float, list]] = {}
# HTML's own characters, and those Streamlit's Markdown would read as emphasis, code, links, tables, headings or
# LaTeX: each becomes a numeric character reference, in one pass (escaping twice would show the entities)
_LITERAL = str.maketrans({c: f"&#{ord(c)};" for c in "&<>\"'*_`[]#~|\\$"})
HIDE_CHROME = """<style>
[data-testid="stToolbar"], [data-testid="stDeployButton"], .stDeployButton {display: none !important;}
[data-testid="stElementToolbar"] {top: -2.2rem;}
.card {border: 1px solid #ddd; border-radius: 8px; padding: 0.6rem 0.8rem; margin-bottom: 0.6rem;
       overflow-wrap: anywhere;}
.card .meta {color: #555; font-size: 0.85em;}
.card.linked {border: 2px solid #1565c0;}
.card table.board {margin: 0.3rem 0;}
.badge.label {border-color: #ef6c00; color: #ef6c00;}
.summary {font-size: 1.05em; margin: -0.4rem 0 0.4rem 0;}
.badge {border: 1px solid #999; border-radius: 6px; padding: 0 6px; font-size: 0.8em; white-space: nowrap;}
.bar {display: flex; height: 1.1rem; min-width: 6rem; border-radius: 4px; overflow: hidden;}
.bar span {color: white; font-size: 0.75em; text-align: center; line-height: 1.1rem; overflow: hidden;}
table.board {width: 100%; border-collapse: collapse;} table.board td, table.board th {padding: 4px 6px;
  border-bottom: 1px solid #eee; vertical-align: middle; text-align: left;}
table.board th {white-space: nowrap;}
@media (max-width: 640px) { .hide-narrow {display: none;} }
.scroll, [data-testid="stMarkdownContainer"]:has(table.board) {overflow-x: auto; max-width: 100%;}
.topnav {display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; margin-bottom: 0.4rem;}
</style>"""


def safe(text: str) -> str:
    """User or claims-file text, shown literally inside st.markdown(..., unsafe_allow_html=True)."""
    return str(text).translate(_LITERAL) if text else ""


def html_table(rows: list[dict]) -> str:
    """`rows` (one dict per row, the first row's keys as the header) as the app's HTML table, every cell shown
    literally. Drawn as HTML, like the overview's board, rather than with st.table: Streamlit's table component is a
    script chunk that a browser parses on its first table (about 1.7 s of the task page's first visit here)."""
    if not rows:
        return ""
    header = "".join(f"<th>{safe(key)}</th>" for key in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{safe(str(row[key]))}</td>" for key in rows[0]) + "</tr>" for row in rows)
    return f"<div class='scroll'><table class='board'><tr>{header}</tr>{body}</table></div>"  # scrolls when narrow


def nav(view: str) -> str:
    """Every page's links at its top (HTML): the navigation a narrow screen reaches without the sidebar."""
    return "<div class='topnav'>" + "".join(
        f"<b>{v}</b>" if v == view else f"<a href='{href(v)}' target='_self'>{v}</a>" for v in VIEWS) + "</div>"


def href(view: str, **params) -> str:
    return "?" + urlencode({"view": view, **{k: v for k, v in params.items() if v not in (None, "")}})


def link(text: str, view: str, **params) -> str:
    """An anchor that opens in this tab (the app's own navigation: Back works, one app instance)."""
    return f"<a href='{html.escape(href(view, **params), quote=True)}' target='_self'>{safe(text)}</a>"


def keep_in_url(view: str, **params) -> None:
    """Make the URL say what the page shows, so that it can be shared and reloaded."""
    wanted = {"view": view, **{k: str(v) for k, v in params.items() if v not in (None, "")}}
    if dict(st.query_params) != wanted:
        st.query_params.from_dict(wanted)


def choice(name: str, allowed: list[str], default: str | None = None) -> str | None:
    """The URL's `name` if allowed; an unknown one stops the page with a message naming what is allowed."""
    wanted = st.query_params.get(name)
    if wanted is None:
        return default
    if wanted not in allowed:
        shown = ", ".join(allowed[:30]) + (" ..." if len(allowed) > 30 else "")
        st.error(f"unknown {name} {wanted!r}; known: {shown}")
        st.stop()
    return wanted


def db_url() -> str:
    """--db URL after `--` on the streamlit command line, else BENCH_DB_URL, else ./bench.db."""
    args = sys.argv[1:]
    if "--db" in args and args.index("--db") + 1 < len(args):
        return args[args.index("--db") + 1]
    return resolve_url(os.environ.get("BENCH_DB_URL"))


ROOT = Path(__file__).resolve().parents[2]


def registry_files(root: Path = ROOT) -> tuple:
    """What the registry is read from, as (path, mtime, size) of every methods/*/*.py, tasks/*/*.py and claims file:
    a file added, changed or removed while the server runs changes it, and the registry is read again."""
    found = []
    for pattern in ("methods/*/*.py", "tasks/*/*.py", "leaderboard/papers/*.yaml"):
        for path in sorted(root.glob(pattern)):
            try:
                info = path.stat()
            except OSError:  # removed between the listing and the stat
                continue
            found.append((str(path.relative_to(root)), info.st_mtime_ns, info.st_size))
    return tuple(found)


@st.cache_resource(ttl=FILES_TTL_S, show_spinner=False)
def files_now() -> str:
    """A digest of registry_files(), listed at most once a second: a page asks for the registry and the claims files
    dozens of times, and each listing stats some 250 files (about 20 ms on a loaded machine). A digest, not the
    listing, is what the caches take as their key: Streamlit hashed the 250-entry tuple at every cached call (a
    second of a task page)."""
    return hashlib.sha256(repr(registry_files()).encode()).hexdigest()


@st.cache_resource(max_entries=1, show_spinner=False)
def cached_registry(files: str) -> Registry:
    return Registry.discover()


def registry() -> Registry:
    """The registry, read again when its files change (or the refresh button clears it)."""
    return cached_registry(files_now())


@st.cache_resource(max_entries=64, show_spinner=False)
def cached_claims_files(slug: str, files: str):
    from leaderboard.claims import load_paper

    return load_paper(registry(), slug)


def claims_file(slug: str):
    """A claims file read and validated once, and again when the registry's files change (a BenchError, never
    cached, says why it cannot be used)."""
    return cached_claims_files(slug, files_now())


@st.cache_resource
def store(url: str) -> Store:
    return Store.open(url, readonly=True)
