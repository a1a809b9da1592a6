"""Our AlpacaEval 2.0 win rates against the published leaderboard, model by model.

Run: `python benchmarks/alpacaeval_lc.py [DIR]`, DIR holding `preferences.csv.gz` (the weighted GPT-4-turbo
judge's published per-instruction preferences and output lengths) and `leaderboard.csv` (the published
`win_rate` and `length_controlled_winrate`); default: the AlpacaEval data folder beside the repository, as the
tests read it. Prints, per model, our LC win rate (the published GLM, instruction difficulties fitted jointly on
these models), the published one, their difference, the per-model simple fit (no difficulty term: what this
project used before) and the raw win rates; then the mean and max absolute LC differences and the Spearman
rank correlations.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from tasks.preference import length_controlled_win_rate_simple
from tasks.preference._alpacaeval_lc import read_annotations, win_rates

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alpacaeval"


def main(folder: Path = DEFAULT) -> None:
    annotations = read_annotations(folder / "preferences.csv.gz")
    board = pd.read_csv(folder / "leaderboard.csv", index_col="model")
    start = time.perf_counter()
    ours = win_rates(annotations)
    seconds = time.perf_counter() - start
    simple = {m: 100 * length_controlled_win_rate_simple(r["preference"].to_numpy(),
                                                           (r["model_output_chars"]
                                                            - r["reference_output_chars"]).to_numpy())
              for m, r in annotations.dropna(subset=["preference"]).groupby("model")}
    table = pd.DataFrame({"LC ours": ours["lc_win_rate"], "LC published": board["length_controlled_winrate"],
                          "simple fit": pd.Series(simple), "WR ours": ours["win_rate"],
                          "WR published": board["win_rate"]})
    table = table.dropna(subset=["LC ours", "LC published"])
    table.loc["gpt4_1106_preview", "simple fit"] = 50.0                 # the baseline against itself
    table.insert(2, "LC diff", table["LC ours"] - table["LC published"])
    print(table.sort_values("LC published", ascending=False).round(2).to_string())
    diff, simple_diff = table["LC diff"].abs(), (table["simple fit"] - table["LC published"]).abs()
    print(f"\n{len(table)} models; LC fit in {seconds:.1f} s")
    print(f"LC   |ours - published|: mean {diff.mean():.2f}, median {diff.median():.2f}, max {diff.max():.2f} "
          f"({diff.idxmax()}); Spearman {spearmanr(table['LC ours'], table['LC published']).statistic:.3f}")
    print(f"simple per-model fit: mean {simple_diff.mean():.2f}, max {simple_diff.max():.2f}; "
          f"Spearman {spearmanr(table['simple fit'], table['LC published']).statistic:.3f}")
    print(f"raw win rate: max |ours - published| {np.abs(table['WR ours'] - table['WR published']).max():.2e} points")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
