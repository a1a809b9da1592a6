"""End to end: `bench leaderboard` on loopback, opened in headless Chromium (Debian's chromium), at 1280 and 400 px.

Slow tier: it reproduces the performative paper first (claims and negative controls, about a minute) so its
verdicts are this store's; every other paper shows its verdict lock's reference run, as on a fresh checkout.
Without /usr/bin/chromium the test skips locally; under CI (CI=true), where .ci/run installs it in the
background, it waits for the install and fails if it never ends.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks._browser import chromium, chromium_installed, serving, settled

pytestmark = pytest.mark.slow
INSTALL_WAIT_S = 900  # under CI, .ci/run installs chromium in the background while the tiers start
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
STORED = "clipped-sgd-performative"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if os.environ.get("CI") == "true":
        waited = time.monotonic()
        while not chromium_installed() and time.monotonic() - waited < INSTALL_WAIT_S:
            time.sleep(2)
        if not chromium_installed():
            pytest.fail(f"chromium is missing under CI after {INSTALL_WAIT_S} s; .ci/run installs Debian's chromium")
    elif not chromium_installed():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    db = tmp_path_factory.mktemp("browser") / "bench.db"
    env = {**os.environ, "BENCH_DB_URL": f"sqlite:///{db}"}
    subprocess.run([sys.executable, "-m", "bench", "reproduce", STORED, "--scale", "cpu", "--controls", "--workers",
                    "2"], env=env, check=True, capture_output=True, timeout=600)
    with serving(env) as base:
        yield base


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as chrome:
        yield chrome


def _not_cut_off(page, selector: str, width: int) -> int:
    """Every element matching `selector` lies inside the viewport's width and does not overflow itself."""
    boxes = page.eval_on_selector_all(selector, """els => els.map(e => {const r = e.getBoundingClientRect();
        return [r.left, r.right, e.scrollWidth - e.clientWidth, e.textContent.slice(0, 60)]})""")
    assert boxes, f"nothing matches {selector}"
    for left, right, overflow, text in boxes:
        assert left >= -1 and right <= width + 1 and overflow <= 1, f"{selector} cut off at {width}px: {text!r}"
    return len(boxes)


def _no_sideways_scroll(page, width: int) -> None:
    """The page itself is never wider than the window: what is wide scrolls inside its own box."""
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1


def _shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("width", [1280, 400])
def test_every_view_shows_its_verdicts_uncut_with_plots_and_urls_that_round_trip(server, browser, width):
    from bench.registry import Registry
    from leaderboard.claims import CPU_SCALES, load_paper
    from leaderboard.lock import read_lock

    page = browser.new_page(viewport={"width": width, "height": 2400})
    page.goto(f"{server}/?view=overview")
    page.locator("table.board").wait_for(timeout=120_000)  # the first page of a cold app takes longest
    settled(page)
    for slug in Registry.discover().papers():
        assert page.locator(f"a[href='?view=paper&paper={slug}']").first.is_visible()
    assert page.locator("div.bar span").first.is_visible()  # the coloured verdict bars
    _not_cut_off(page, "table.board td:first-child, div.bar", width)
    _no_sideways_scroll(page, width)
    _shoot(page, f"overview-{width}")

    # a link stays in this tab, its URL names the view, and Back returns to the overview
    page.locator("a[href='?view=paper&paper=cmdp-bobw']").first.click()
    page.wait_for_url("**/?view=paper&paper=cmdp-bobw")
    settled(page)
    page.get_by_text("Nothing of this paper is stored here").wait_for(timeout=60_000)
    locked = read_lock("cmdp-bobw").claims["adversarial-reward-fraction"].verdict
    card = page.locator("div.card", has_text="adversarial-reward-fraction")
    assert card.locator("span", has_text=locked).first.is_visible()  # its chip
    page.go_back()
    page.wait_for_url("**/?view=overview")

    # the stored paper: chips, intervals and every rate claim's plot open, nothing cut off
    page.goto(f"{server}/?view=paper&paper={STORED}&scale=cpu")
    settled(page)
    assert "scale=cpu" in page.url and f"paper={STORED}" in page.url  # the state survived the load
    lock = read_lock(STORED)
    paper = load_paper(Registry.discover(), STORED)
    cards = sum(c.scale in CPU_SCALES for c in paper.claims)
    # Streamlit draws the cards as its script runs; on a loaded machine the status widget can be gone before the
    # rerun starts, so wait for the cards themselves (CI caught 1 of 15 drawn when they were counted)
    page.wait_for_function(f"document.querySelectorAll('div.card').length >= {cards}", timeout=120_000)
    settled(page)
    assert _not_cut_off(page, "div.card", width) == cards
    _no_sideways_scroll(page, width)
    for claim_id, claim in lock.claims.items():
        card = page.locator("div.card", has_text=claim_id).first
        assert card.locator("span", has_text=claim.verdict).first.is_visible()
    assert "± " in page.locator("div.card").first.text_content()
    rates = sum(c.kind == "rate" and c.scale in CPU_SCALES for c in paper.claims)
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length >= {rates}", timeout=60_000)
    assert "fitted slope" in page.locator("body").text_content()  # open, no expander clicked
    _shoot(page, f"paper-{width}")

    page.goto(f"{server}/?view=task&task=performative&min_seeds=2")
    settled(page)
    assert "min_seeds=2" in page.url and "task=performative" in page.url
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    _no_sideways_scroll(page, width)
    _shoot(page, f"task-{width}")
    page.close()


def test_at_400_px_the_top_links_reach_every_view_and_wide_tables_scroll(server, browser):
    """A phone has no sidebar open: the links at the top of every page reach every view, and the task table, wider
    than the column, scrolls inside its box until its last column (the 95 % CI's neighbours) is in view."""
    width = 400
    page = browser.new_page(viewport={"width": width, "height": 1600})
    page.goto(f"{server}/?view=overview")
    page.locator("table.board").wait_for(timeout=120_000)
    settled(page)
    for view, ready in (("task", "table.board"), ("runs", "[data-testid='stDataFrame']"), ("paper", "div.card"),
                        ("overview", "div.bar")):
        link = page.locator(f"div.topnav a[href='?view={view}']")
        assert link.is_visible()
        link.click()
        page.wait_for_url(f"**/?view={view}**")
        page.locator(ready).first.wait_for(timeout=120_000)
        settled(page)
        _no_sideways_scroll(page, width)
    page.goto(f"{server}/?view=task&task=performative")
    settled(page)
    box = page.locator("div.scroll:has(table.board)").first
    inner, outer = box.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert inner > outer and outer <= width  # wider than the column: it scrolls, the page does not
    assert box.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    last = box.locator("th").last
    box.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    left, right = last.evaluate("e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; }")
    assert 0 <= left and right <= width + 1, "the last column stays out of reach"
    _shoot(page, "task-400-scrolled")
    page.close()


@pytest.mark.parametrize("width", [1280, 400])
def test_a_claim_link_opens_that_claim_first_and_stays_in_the_url(server, browser, width):
    page = browser.new_page(viewport={"width": width, "height": 1200})
    page.goto(f"{server}/?view=paper&paper={STORED}")
    settled(page)
    page.locator("div.card a", has_text="link to this claim").nth(1).click()
    page.wait_for_url("**claim=**")
    settled(page)
    claim = page.url.split("claim=")[1].split("&")[0]
    first = page.locator("div.card").first
    assert "linked" in first.get_attribute("class") and claim in first.text_content()
    assert first.evaluate("e => e.getBoundingClientRect().top") < 1200  # on the first screen
    page.reload()
    settled(page)
    assert f"claim={claim}" in page.url and claim in page.locator("div.card").first.text_content()
    page.close()
