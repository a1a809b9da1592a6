"""The terminal layouts of `bench claims`, `bench show` and `--dry-run`, read as an 80-column terminal shows them: no
line too long, verdict names whole, and every number on screen parses and equals the number it renders."""

import math
import re
from dataclasses import replace

import pytest

from app.terminal import (
    PaperVerdicts,
    claims_markdown,
    paint,
    render_board,
    render_claims,
    render_compact,
    render_dry_run,
    wrap,
)
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import VERDICTS, evaluate_paper, load_paper
from leaderboard.lock import read_lock, with_reference
from leaderboard.queries import BoardRow

NUMBER = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"


@pytest.fixture(scope="module")
def registry():
    return Registry.discover()


@pytest.fixture(scope="module")
def fresh(registry) -> list[PaperVerdicts]:
    """Every paper as a fresh checkout shows it: nothing stored, each lock's reference run."""
    store = Store.open("sqlite://")
    shown = []
    for slug in registry.papers():
        paper, lock = load_paper(registry, slug), read_lock(slug)
        verdicts, source = with_reference(evaluate_paper(paper, store, registry), lock)
        shown.append(PaperVerdicts(paper, verdicts, lock.label if source == "reference" else ""))
    return shown


def _close(text: str, value: float) -> bool:
    """`text` (a printed number) is `value` to the last digit printed: within half a unit of that digit."""
    mantissa, _, exponent = text.lower().partition("e")
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    unit = 10.0 ** (int(exponent or 0) - places)
    return abs(float(text) - value) <= 0.5 * unit * (1 + 1e-9) + 1e-300


def _blocks(text: str) -> dict[str, str]:
    """A narrow layout's claim blocks by claim id, each block's lines joined (a wrapped line read as one)."""
    out = {}
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if lines and " " not in lines[0]:
            out[lines[0]] = " ".join(line.strip() for line in lines)
    return out


def test_every_paper_at_80_columns_fits_with_whole_verdicts_and_exact_numbers(fresh):
    checked = 0
    for shown in fresh:
        text = render_claims([shown], 80)
        assert max(map(len, text.splitlines())) <= 80, shown.paper.slug
        assert "…" not in text and "repro " not in text
        blocks = _blocks(text)
        for v in shown.verdicts:
            block = blocks[v.claim.id]
            status = block.split(" · ")[0].removeprefix(v.claim.id).strip()
            assert status == v.verdict and status in VERDICTS  # the verdict written whole, first
            assert f" · {v.claim.scale} · " in block
            seeds = "1 seed" if v.claim.seeds == 1 else f"{v.claim.seeds} seeds"
            assert re.search(rf" · {seeds}( |$)", block)
            if v.evidence is None:
                continue
            at = 0
            for cell in v.evidence.cells:  # the paper's groups in order: "label: mean [low, high], n=k"
                found = re.compile(re.escape(cell.label) + rf": ({NUMBER})(?: \[({NUMBER}), ({NUMBER})\])?").search(
                    block, at)
                assert found, (v.claim.id, cell.label)
                at = found.end()
                assert _close(found[1], cell.mean) or found[1] == f"{cell.mean:.6g}"
                if found[2] is not None:
                    assert _close(found[2], cell.low) and _close(found[3], cell.high)
                checked += 1
            if math.isfinite(v.evidence.low) and v.evidence.method != "exact":  # the interval that decided it
                found = re.search(rf"interval \[({NUMBER}), ({NUMBER})\], n=(\d+)", block)
                assert _close(found[1], v.evidence.low) and _close(found[2], v.evidence.high)
                assert int(found[3]) == v.evidence.n
    assert checked > 200  # the locks hold cells for most claims


def test_the_paper_number_stands_beside_ours_on_its_group_line(fresh):
    """An ordering whose paper gives a number per group (best-of-n's trade-off table): each group's line carries
    the paper's number after ours."""
    from leaderboard.claims import CellStat, Evidence

    shown = next(s for s in fresh if s.paper.slug == "best-of-n-kl")
    v = next(v for v in shown.verdicts if v.claim.id == "tradeoff-n2")
    cells = tuple(CellStat(g.label(), 0.5 + i / 10, 0.45 + i / 10, 0.55 + i / 10, 5, ())
                  for i, g in enumerate(v.claim.groups))
    v = replace(v, verdict="reproduced", evidence=Evidence(quantity="gap", estimate=0.1, low=0.05, high=0.15, n=5,
                                                           cells=cells))
    block = _blocks(render_claims([replace(shown, verdicts=[v])], 80))[v.claim.id]
    for cell, group in zip(cells, v.claim.groups, strict=True):
        found = re.search(re.escape(cell.label) + rf": ({NUMBER}) \[({NUMBER}), ({NUMBER})\], n=5; paper ({NUMBER})",
                          block)
        assert found and float(found[4]) == group.paper_value and _close(found[1], cell.mean), block


def test_one_seed_is_singular_and_fragile_is_labelled(fresh):
    shown = fresh[0]
    v = next(v for v in shown.verdicts if v.claim.role == "claim")
    one = replace(v, claim=replace(v.claim, seeds=1, fragile="flips under other rounding"))
    text = render_claims([replace(shown, verdicts=[one])], 80)
    assert f"{v.verdict} · fragile · " in text and " · 1 seed" in text and "1 seeds" not in text


def test_wide_terminals_get_a_table_with_every_claim_id_whole_first_on_its_row(fresh):
    for width in (120, 320):
        shown = next(s for s in fresh if s.paper.slug == "cmdp-bobw")
        lines = render_claims([shown], width).splitlines()
        assert max(map(len, lines)) <= width
        firsts = [line.split()[0] for line in lines if line.split()]
        for v in shown.verdicts:
            assert v.claim.id in firsts
        assert any(line.startswith("claim ") and "verdict" in line for line in lines)


def test_compact_is_a_line_per_claim_with_the_deciding_interval(fresh):
    text = render_compact(fresh, 80)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80 and len(lines) < 400  # every paper's blocks: well over 1,000 lines
    joined = re.sub(r"\n {4,}", " ", text)  # a wrapped entry read as one line
    for shown in fresh:
        for v in shown.verdicts:
            e = v.evidence
            if v.claim.role != "claim" or e is None or not math.isfinite(e.low) or e.method == "exact":
                continue
            found = re.search(rf"\n  {re.escape(v.verdict)} +{re.escape(v.claim.id)} ({NUMBER}) \[({NUMBER}), "
                              rf"({NUMBER})\] ([≥≤]) ({NUMBER}), n=(\d+)", joined)
            assert found, v.claim.id
            estimate, low, high, relation, threshold, n = found.groups()
            for printed, value in ((estimate, e.estimate), (low, e.low), (high, e.high), (threshold, e.threshold)):
                assert _close(printed, float(f"{value:.3g}")) and math.isclose(float(printed), value, rel_tol=5e-3,
                                                                               abs_tol=1e-12)
            assert relation == ("≥" if e.side > 0 else "≤") and int(n) == e.n


@pytest.mark.parametrize("width", [13, 16, 21, 34])  # the longest number (11) and the indent fit
def test_wrap_never_cuts_a_number(width):
    text = "pcsgd_optimal_step(epsilon=0.001, task.b=10.0): 108.665 [-41.6851, 1.75645e+02] x=-0.000232142"
    lines = wrap(text, width, " ")
    assert max(map(len, lines)) <= width
    for number in re.findall(NUMBER, text):
        assert any(re.search(rf"(?<![\d.]){re.escape(number)}(?![\d.])", line) for line in lines), (number, lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # nothing lost, nothing added


def test_markdown_is_one_short_row_per_claim_and_the_long_text_in_notes(fresh):
    shown = [s for s in fresh if s.paper.slug in ("cmdp-bobw", "clipped-sgd-performative")]
    text = claims_markdown(shown)
    table, notes = text.split("\n\n", 1)
    rows = table.splitlines()
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]
    assert {len(c) for c in cells} == {len(cells[0])}  # every row as many cells as the header
    body = cells[2:]
    assert len(body) == sum(len(s.verdicts) for s in shown)
    assert max(len(c) for row in body for c in row) <= 70  # a claim id (52 at most) and its role
    assert all(row[2] in VERDICTS for row in body)
    numbered = notes.strip().splitlines()
    assert [int(line.split(".")[0]) for line in numbered] == [int(row[-1]) for row in body] == list(
        range(1, len(body) + 1))


def _row(method, config, n, mean, low, high, rank, tied=False, low_seeds=False):
    return BoardRow("performative", "beta=0.05", method, config, "cpu", "final_gap", False, n, mean, 0.000448, low,
                    high, "t", rank=rank, tied=tied, low_seeds=low_seeds, most_seeds=20, group="T=100000")


def test_bench_show_at_80_columns_keeps_every_number_and_marks_ties():
    rows = [_row("pcsgd_optimal_step_with_a_long_name", "epsilon=0.001, c=1000000.0, T=100000", 20, 0.000232142,
                 2.2e-05, 0.00044226, 1, tied=True),
            _row("dicesgd", "", 20, 0.000232, 2.21e-05, 0.000442, 1, tied=True),
            _row("pcsgd", "T=2000", 2, 3.53045, 3.52, 3.54, None, low_seeds=True)]
    text = render_board({("performative [beta=0.05] · T=100000", "final_gap"): rows}, 80)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80
    assert sum(line.lstrip().startswith("=1 ") for line in lines) == 2 and "(low)" in text
    means = re.findall(rf"mean ({NUMBER}), std ({NUMBER}), 95% CI \[({NUMBER}), ({NUMBER})\]", text)
    assert len(means) == 3
    for (mean, std, low, high), row in zip(means, rows, strict=True):
        assert _close(mean, row.mean) and _close(std, row.std) and _close(low, row.ci_low) and _close(high,
                                                                                                      row.ci_high)


def test_dry_run_shows_only_the_settings_that_differ_from_the_defaults(registry):
    from leaderboard.queries import config_label
    from leaderboard.reproduction import claim_cells

    cells = claim_cells([load_paper(registry, "clipped-sgd-performative")], registry, "cpu", controls=True)
    text = render_dry_run(cells, registry, 80)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80 and lines[-1].startswith(f"{len(cells)} cells")
    entries = re.split(r"\n(?=[0-9a-f]{12} )", text.rsplit("\n", 2)[0])
    assert len(entries) == len(cells)
    for entry, cell in zip(entries, cells, strict=True):
        flat = " ".join(entry.split())
        changed = config_label(dict(cell.method_config), registry.config_defaults("method", cell.method))
        assert (f"method: {changed}" in flat) == bool(changed)
        assert flat.startswith(f"{cell.run_key[:12]} {cell.method} x {cell.task} seed={cell.seed}")
        assert len(flat) < 200  # the full configs were ~800 characters a line


def test_paint_colours_whole_verdict_names_only():
    assert paint("not reproduced and reproduced") == "\x1b[31mnot reproduced\x1b[0m and \x1b[32mreproduced\x1b[0m"
