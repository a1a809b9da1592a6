"""The Streamlit leaderboard: a read-only view over the store. Start it with `bench leaderboard`.

Pages (the URL's `?view=`, every selection in the query string too, so a view can be shared and Back works):
overview (a stacked verdict bar per paper and scale), paper (one card per claim: verdict, values with CIs,
criterion, plot, runs), task (methods ranked with 95 % CIs and the papers' values), runs (explorer with
provenance, curves, logs and tracebacks). Every number comes from leaderboard.queries / claims / cards; the
pages in leaderboard/ui only draw them.
"""

from __future__ import annotations

import streamlit as st

from bench.errors import BenchError
from bench.store import mask_url
from leaderboard.ui.common import (
    HIDE_CHROME,
    VIEWS,
    cached_claims_files,
    cached_registry,
    db_url,
    files_now,
    href,
    nav,
    prefetched,
    store,
)


def main() -> None:
    st.set_page_config(page_title="ICML 2025 reproductions", layout="wide", menu_items={})
    st.markdown(HIDE_CHROME, unsafe_allow_html=True)
    url = db_url()
    view = st.query_params.get("view", "overview")
    with st.sidebar:
        st.title("Reproductions")
        st.markdown("<br>".join(f"<a href='{href(v)}' target='_self'>{'<b>' + v + '</b>' if v == view else v}</a>"
                                for v in VIEWS), unsafe_allow_html=True)
        if st.button("refresh"):
            st.cache_data.clear()
            cached_registry.clear()  # a method or task file added while the server runs
            cached_claims_files.clear()
            files_now.clear()
            prefetched.clear()
        st.caption(f"store: {mask_url(url)}")  # every viewer sees the sidebar: never the password
    st.markdown(nav(view), unsafe_allow_html=True)  # at the top too: a narrow screen has no sidebar open
    if view not in VIEWS:
        st.error(f"unknown view {view!r}; views: {', '.join(VIEWS)}")
        return
    try:
        store(url)
    except BenchError as exc:
        st.error(str(exc))
        st.stop()
    if view == "overview":  # each page imports what it draws with only when it is shown (a faster first page)
        from leaderboard.ui.overview import overview_page
        overview_page(url)
    elif view == "task":
        from leaderboard.ui.task import task_page
        task_page(url)
    elif view == "paper":
        from leaderboard.ui.paper import paper_page
        paper_page(url)
    else:
        from leaderboard.ui.runs import runs_page
        runs_page(url)


main()
