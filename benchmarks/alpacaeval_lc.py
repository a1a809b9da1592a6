"""Our AlpacaEval 2.0 win rates against the published leaderboard, model by model, and the length-gaming test.

Run: `python benchmarks/alpacaeval_lc.py [DIR] [--model NAME | --all-models]`, DIR holding `preferences.csv.gz`
(the weighted GPT-4-turbo judge's published per-instruction preferences and output lengths), `leaderboard.csv`
(the published `win_rate` and `length_controlled_winrate`) and the gamed baselines (`gamed_baselines.csv.gz`,
`gamed_baselines_glm.csv`); default: the AlpacaEval data folder beside the repository, as the tests read it.

Prints, per model: our LC win rate (the published GLM, instruction difficulties fitted jointly on these models,
regularised towards the gamed baselines rebuilt from their published GLM), the published one, their difference,
the same without the regulariser (the package's length_controlled_noreg), the per-model simple fit (no difficulty
term: what this project used before) and the raw win rates; the mean and max absolute LC differences and the
Spearman rank correlations; the gamed baselines' own LC against their published values. Then the gaming test
(`_alpacaeval_lc.length_gamed_version`): the model (default FuseChat-Llama-3.2-3B-Instruct, the shared model
closest to the baseline in raw win rate and length) made verbose and concise the way the published gamed
baselines are, its raw and LC win rates per version, with and without the regulariser, and how far each moved;
`--all-models` prints the moves for every model.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from tasks.preference import _alpacaeval_lc as lc
from tasks.preference import length_controlled_win_rate_simple

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alpacaeval"
GAMED_MODEL = "FuseChat-Llama-3.2-3B-Instruct"


def leaderboard(annotations, board, difficulty, gamed) -> None:
    start = time.perf_counter()
    ours = lc.win_rates(annotations, difficulty=difficulty, gamed=gamed)
    seconds = time.perf_counter() - start
    noreg = lc.win_rates(annotations, difficulty=difficulty)
    simple = {m: 100 * length_controlled_win_rate_simple(r["preference"].to_numpy(),
                                                           (r["model_output_chars"]
                                                            - r["reference_output_chars"]).to_numpy())
              for m, r in annotations.dropna(subset=["preference"]).groupby("model")}
    table = pd.DataFrame({"LC ours": ours["lc_win_rate"], "LC published": board["length_controlled_winrate"],
                          "LC no reg": noreg["lc_win_rate"], "simple fit": pd.Series(simple),
                          "WR ours": ours["win_rate"], "WR published": board["win_rate"]})
    table = table.dropna(subset=["LC ours", "LC published"])
    table.loc[lc.BASELINE, "simple fit"] = 50.0                        # the baseline against itself
    table.insert(2, "LC diff", table["LC ours"] - table["LC published"])
    print(table.sort_values("LC published", ascending=False).round(2).to_string())
    print(f"\n{len(table)} models; per-model LC fits in {seconds:.1f} s")
    for name, column in (("LC (regularised)", "LC ours"), ("LC without the regulariser", "LC no reg"),
                         ("simple per-model fit", "simple fit")):
        gap = (table[column] - table["LC published"]).abs()
        print(f"{name}: |ours - published| mean {gap.mean():.2f}, median {gap.median():.2f}, max {gap.max():.2f} "
              f"({gap.idxmax()}); Spearman {spearmanr(table[column], table['LC published']).statistic:.3f}")
    print(f"raw win rate: max |ours - published| {np.abs(table['WR ours'] - table['WR published']).max():.2e} points")
    alpha, beta = lc.calibrate_difficulty(difficulty, gamed)
    print(f"\ngamed baselines rebuilt from their published GLM (gamma mapped to (gamma - {alpha:.3f}) / {beta:.3f}):")
    print(lc.gamed_baseline_win_rates(gamed, difficulty).round(2).to_string())


def gaming(annotations, difficulty, gamed, models) -> None:
    calibrated, anchor = lc.regulariser(difficulty, gamed)
    moves = {}
    for model in models:
        original = annotations[annotations["model"] == model]
        versions = {"original": original, **{name.rsplit("_", 1)[-1]: lc.length_gamed_version(
            original, gamed, name, calibrated, anchor) for name in gamed.glm.index}}
        rows = {}
        for name, frame in versions.items():
            reg = lc.win_rates(frame, difficulty=difficulty, gamed=gamed).loc[model]
            noreg = lc.win_rates(frame, difficulty=difficulty).loc[model]
            rows[name] = {"avg length": frame["model_output_chars"].mean(), "raw": reg["win_rate"],
                          "LC": reg["lc_win_rate"], "LC s.e.": reg["lc_standard_error"],
                          "LC no reg": noreg["lc_win_rate"]}
        table = pd.DataFrame(rows).T
        moved = (table.drop(index="original") - table.loc["original"]).abs()
        moves[model] = {f"{col} {v}": moved.loc[v, col] for v in moved.index for col in ("raw", "LC", "LC no reg")}
        if len(models) == 1:
            print(f"\ngaming test: {model} made verbose and concise (length_gamed_version)")
            print(table.round(2).to_string())
            for version in moved.index:
                raw, reg, noreg = moved.loc[version, ["raw", "LC", "LC no reg"]]
                print(f"{version}: raw moves {raw:.2f} points, LC {reg:.2f} ({reg / raw:.2f} of raw), "
                      f"without the regulariser {noreg:.2f} ({noreg / raw:.2f})")
    if len(models) > 1:
        table = pd.DataFrame(moves).T
        print("\ngaming test, every model: how far each version moved (points)")
        print(table.round(2).to_string())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--model", default=GAMED_MODEL, help="the model the gaming test games")
    parser.add_argument("--all-models", action="store_true", help="the gaming test's moves for every model")
    args = parser.parse_args()
    annotations = lc.read_annotations(args.folder / "preferences.csv.gz")
    board = lc.read_leaderboard(args.folder / "leaderboard.csv")
    gamed = lc.read_gamed_baselines(args.folder)
    start = time.perf_counter()
    difficulty = lc.instruction_difficulties(annotations)
    print(f"instruction difficulties: joint fit of {annotations['model'].nunique()} models in "
          f"{time.perf_counter() - start:.1f} s\n")
    leaderboard(annotations, board, difficulty, gamed)
    models = sorted(set(annotations["model"]) - {lc.BASELINE}) if args.all_models else [args.model]
    gaming(annotations, difficulty, gamed, models)


if __name__ == "__main__":
    main()
