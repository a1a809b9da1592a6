"""Claim cards: numbers to the precision a claim's tolerance asks for, the criterion in words with the per-seed
count, escaping, and the fidelity of the methods involved."""

from dataclasses import replace

import numpy as np
import pytest

from leaderboard.cards import (
    chip,
    criterion_words,
    decimals_for,
    fmt_significant,
    formatter,
    holding,
    make_card,
    mean_ci,
)
from leaderboard.claims import CellGroup, Claim, ClaimValues, Paper, Verdict


def _claim(kind="ordering", expect=None, groups=("a", "b"), **kw) -> Claim:
    return Claim(id="c", statement=kw.pop("statement", "a < b"), kind=kind, metric="error",
                 groups=tuple(CellGroup(m, "toy_target") for m in groups), expect=expect or {"order": "increasing"},
                 seeds=3, scale="cpu-full", **kw)


def _values(rows) -> ClaimValues:
    rows = np.array(rows, dtype=float)
    return ClaimValues(tuple("ab"[: len(rows)]), rows, None, tuple(() for _ in rows))


def _verdict(claim, ours=(), text="") -> Verdict:
    return Verdict(claim, "reproduced", list(ours), text, "paper", "detail", 3)


def test_an_absolute_tolerance_sets_the_decimals_so_the_check_can_be_read():
    claim = _claim("value", {"atol": 1e-4}, groups=("a",), paper_value=2.3)
    assert decimals_for(1e-4) == 5 and decimals_for(0.03) == 3 and decimals_for(0.5) == 2
    assert formatter(claim)(2.302585093) == "2.30259"   # 2.30259 against 2.3 ± 1e-4: visibly outside
    assert "within ± 0.00010 of the paper's 2.30000 (ours 2.30259)" in criterion_words(
        claim, None, _verdict(claim, [2.302585093]), formatter(claim))


def test_a_relative_tolerance_sets_significant_figures():
    assert formatter(_claim("value", {"rtol": 0.001}, groups=("a",), paper_value=1.0))(1.23456789) == "1.2346"
    assert formatter(_claim("value", {"factor": 2}, groups=("a",), paper_value=1.0))(1.23456789) == "1.23"


@pytest.mark.parametrize("x, text", [(0.000232, "0.000232"), (3.5312, "3.53"), (12345.6, "12346"), (0, "0"),
                                     (2e-7, "2.00e-07"), (float("nan"), "n/a"), (-0.04567, "-0.0457")])
def test_significant_figures_are_consistent_and_never_sixteen_decimals(x, text):
    assert fmt_significant(x) == text


def test_mean_ci_is_the_t_interval_over_the_seeds():
    # mean 2, sd 1, n = 3: half-width t_{0.975, 2} · 1/√3 = 4.3027 / 1.7321 = 2.484
    assert mean_ci(np.array([1.0, 2.0, 3.0]), lambda x: f"{x:.3f}") == "2.000 ± 2.484 (n = 3)"
    assert mean_ci(np.array([5.0, np.nan]), str) == "5.0 (1 seed)"
    assert mean_ci(np.array([np.nan]), str) == "n/a"


def test_seeds_holding_counts_strict_wins_and_min_gap_wins():
    values = np.array([[1.0, 2.0, 3.0], [1.5, 2.0, 2.0]])
    assert holding(_claim(), values) == [1]                          # a tie (2, 2) is no win
    assert holding(_claim(expect={"order": "decreasing"}), values) == [1]
    assert holding(_claim(expect={"order": "increasing", "min_gap": 0.5}), values) == [1]
    assert holding(_claim(expect={"order": "increasing", "min_gap": 0.6}), values) == [0]


def test_ordering_criterion_names_the_order_the_margin_and_the_seeds():
    claim = _claim(expect={"order": "decreasing", "min_ratio": 10, "seeds_holding": 2})
    words = criterion_words(claim, _values([[9.0, 8.0, 1.0], [1.0, 2.0, 3.0]]), _verdict(claim), formatter(claim))
    assert words == "error: a > b, each by ≥ 10×; holds in 2 of 3 seeds, 2 needed"


def test_a_locked_verdict_shows_each_cells_interval_and_the_evidence():
    """A fresh checkout's card (the lock's reference run) carries the locked intervals, not bare means."""
    from leaderboard.claims import CellStat, Evidence

    claim = _claim()
    evidence = Evidence(quantity="paired gap b − a", estimate=1.5, low=1.25, high=1.75, n=3, threshold=0.0, p=0.0015,
                        p_adjusted=0.006, family=4, cells=(CellStat("a", 0.6, 0.35, 0.85, 3), CellStat("b", 2.1, 1.67,
                                                                                                       2.53, 3)))
    verdict = replace(_verdict(claim), evidence=evidence, source="reference")
    card = make_card(verdict, Paper("p", "t", [], "", None, None, {}, [claim]), None, None)
    assert card.ours == ["a: 0.600 ± 0.250 (n = 3)", "b: 2.10 ± 0.430 (n = 3)"]
    assert card.evidence == ("paired gap b − a: 1.5, 95 % t interval [1.25, 1.75], n=3 (p=0.0015, Holm-adjusted "
                             "0.006 over 4 claims)")


def test_bound_and_rate_criteria_in_words():
    bound = _claim("bound", {"max": 0.01})
    assert criterion_words(bound, None, _verdict(bound), formatter(bound)) == "error: every group's mean ≤ 0.0100"
    rate = _claim("rate", {"slope": -1, "tolerance": 0.3}, groups=("a",), curve="gap", x_range=(1000.0, 1e5))
    assert criterion_words(rate, None, _verdict(rate, [-0.973]), formatter(rate)) == \
        "log-log slope of gap against step over [1000, 100000]: -1 ± 0.3, ours -0.973"


def test_card_keeps_the_statement_raw_the_chip_escaped_and_names_fidelity():
    claim = _claim(statement="‖z−z*‖² < <b>bold</b>")
    paper = Paper("p", "P", [], "ICML 2025", None, None, {"a": {"fidelity": "reconstructed"}}, [claim])
    card = make_card(_verdict(claim, [1.0, 2.0]), paper, _values([[1.0, 1.1, 0.9], [2.0, 2.1, 1.9]]), 12.3)
    assert card.statement == "‖z−z*‖² < <b>bold</b>"  # the page escapes it (leaderboard/ui/common.safe)
    assert card.ours == ["a: 1.00 ± 0.248 (n = 3)", "b: 2.00 ± 0.248 (n = 3)"]
    assert card.fidelity == "a: reconstructed, b: not a paper's method"
    assert card.cost == "12 CPU-s" and "3 of 3 seeds" in card.criterion
    assert "background:#2e7d32" in chip("reproduced")


def test_page_text_is_literal_in_markdown():
    from leaderboard.ui.common import safe

    assert safe("‖z−z*‖² <b>x</b> $a$ _i_") == "‖z−z&#42;‖² &#60;b&#62;x&#60;/b&#62; &#36;a&#36; &#95;i&#95;"


def test_the_fidelity_summary_is_the_line_under_the_reports_fidelity_heading():
    from pathlib import Path

    from leaderboard.cards import fidelity_summary

    report = "# x\n\n## Fidelity to the authors' material\n\nSummary: 3 constants matched, 1 differing, 0 unknown; " \
             "authors' code run side by side: no\n\n| a | b |\n"
    assert fidelity_summary(report) == "3 constants matched, 1 differing, 0 unknown; authors' code run side by side: no"
    assert fidelity_summary("# x\n\n## Fidelity to the authors' material\n\n| a | b |\n") is None
    assert fidelity_summary("# no table\n") is None
    docs = Path(__file__).resolve().parents[2] / "docs" / "papers"
    with_tables = [p.stem for p in docs.glob("*.md") if fidelity_summary(p.read_text(encoding="utf-8"))]
    assert len(with_tables) >= 10  # every paper with public code or a project page (issue 40)
