"""`bench alpacaeval`: AlpacaEval 2.0 raw and length-controlled win rates of annotated models, from their
annotation files (tasks/preference/_alpacaeval_lc.py computes them)."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from app.console import err, out
from bench.errors import BenchError


def alpacaeval(
    files: Annotated[list[Path],
                     typer.Argument(help="preferences.csv(.gz) files, or AlpacaEval annotations.json files.")],
    baseline: Annotated[str, typer.Option(help="The reference model (its LC is 50).")] = "gpt4_1106_preview",
    leaderboard: Annotated[Path | None, typer.Option(
        help="A leaderboard CSV (model, length_controlled_winrate, win_rate): print the published values and our "
             "differences.")] = None,
    gamed: Annotated[str | None, typer.Option(
        help="Folder holding gamed_baselines.csv.gz and gamed_baselines_glm.csv (the LC's regulariser); default: "
             "the first FILE's folder when it holds them; 'none': no regulariser.")] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table.")] = False,
) -> None:
    """AlpacaEval 2.0 raw and length-controlled win rates (percent, with standard errors) of annotated models.

    The instruction difficulties of the LC GLM are fitted jointly on all the models given: pass many."""
    from tasks.preference import _alpacaeval_lc as lc

    try:
        annotations = lc.read_annotations(*files)
        board = None if leaderboard is None else lc.read_leaderboard(leaderboard)
        anchors = (lc.find_gamed_baselines(files[0].expanduser().parent) if gamed is None
                   else None if gamed == "none" else lc.read_gamed_baselines(gamed))
        table, own = lc.evaluate(annotations, baseline, anchors, board)
    except ValueError as exc:
        raise BenchError(str(exc)) from None
    table = table.sort_values("lc_win_rate", ascending=False)
    notes = ["regulariser: the gamed baselines rebuilt from their published GLM; their own LC: "
             + ", ".join(f"{r.Index} {r.lc_win_rate:.2f} (published {r.published_lc:.2f})" for r in own.itertuples())
             if own is not None else "regulariser: the gamed baselines among the annotations" if anchors is not None
             else "regulariser: none (no gamed baselines given or beside FILE; the package's length_controlled_noreg)"]
    if board is not None:
        a = lc.agreement(table)
        notes.append(f"against {leaderboard.name} ({a['n']} models): LC |ours - published| mean {a['lc_mean']:.2f}, "
                     f"max {a['lc_max']:.2f} ({a['lc_worst']}); raw mean {a['raw_mean']:.2g}, max {a['raw_max']:.2g}")
    if csv:
        sys.stdout.write(table.to_csv(float_format="%.4f"))
        for note in notes:
            err.print(note, highlight=False, markup=False)
        return
    from rich.table import Table

    def cell(value: float) -> str:
        return "–" if value != value else f"{value:.2f}".replace("-0.00", "0.00")

    published = ["published LC", "LC diff"] if board is not None else []
    view = Table("model", "LC win rate", *published, "win rate", *(["published", "diff"] if published else []), "n",
                 "avg length", title="AlpacaEval 2.0 (percent ± s.e.)")
    for model, row in table.iterrows():
        view.add_row(str(model), f"{row.lc_win_rate:.2f} ± {row.lc_standard_error:.2f}",
                     *([cell(row.published_lc), cell(row.lc_diff)] if published else []),
                     f"{row.win_rate:.2f} ± {row.standard_error:.2f}",
                     *([cell(row.published_win_rate), cell(row.win_rate_diff)] if published else []),
                     str(int(row.n_total)), f"{row.avg_length:.0f}")
    out.print(view)
    for note in notes:
        out.print(note, highlight=False, markup=False)
