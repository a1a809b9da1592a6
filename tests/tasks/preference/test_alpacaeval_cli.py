"""`bench alpacaeval FILE`: raw and LC win rates with standard errors, the published values and our differences
when a leaderboard is given, the summary line, the regulariser it used; bad input is a one-line error (exit 2)."""

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tasks.preference import _alpacaeval_lc as lc
from tests.helpers import run_bench

pytestmark = pytest.mark.integration  # the `bench` command as a subprocess

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "alpacaeval"
needs_data = pytest.mark.skipif(not (DATA / "preferences.csv.gz").is_file(),
                                reason=f"the published AlpacaEval annotations are not at {DATA}")
SUMMARY = re.compile(r"\((\d+) models\): LC \|ours - published\| mean ([0-9.]+), max ([0-9.]+) \((\S+)\); "
                     r"raw mean (\S+), max (\S+)")


def bench(*args, check):
    proc = run_bench(*args, columns=250)
    assert proc.returncode == check, proc.stdout + proc.stderr
    return proc


@needs_data
def test_the_30_shared_models_against_the_published_leaderboard():
    """Measured: LC 0.32 points off on average, 1.61 at worst (claude-2.1); raw exact; the gamed baselines'
    own LC 50.32 (published 51.58) and 42.87 (41.90)."""
    proc = bench("alpacaeval", str(DATA / "preferences.csv.gz"), "--leaderboard", str(DATA / "leaderboard.csv"),
                 "--csv", check=0)
    table = pd.read_csv(io.StringIO(proc.stdout), index_col="model")
    assert len(table) == 30 and {"lc_standard_error", "standard_error", "published_lc", "lc_diff"} <= set(table)
    assert table["lc_diff"].abs().mean() < 0.5 and table["lc_diff"].abs().max() < 2.0
    assert table["win_rate_diff"].abs().max() < 1e-3                          # printed with 4 decimals
    (n, mean, worst, model, _, raw_max), = SUMMARY.findall(proc.stderr)
    assert (int(n), model) == (30, "claude-2.1") and float(mean) < 0.5 and float(worst) < 2.0
    assert float(raw_max) < 1e-6
    own = dict(re.findall(r"(gpt4_1106_preview_\w+) ([0-9.]+) \(published", proc.stderr))
    assert abs(float(own["gpt4_1106_preview_verbose"]) - 51.58) < 2 and abs(float(own["gpt4_1106_preview_concise"])
                                                                             - 41.90) < 2


def annotations(folder: Path) -> pd.DataFrame:
    """The baseline and three models on 30 instructions (a preferences.csv.gz in `folder`)."""
    rng = np.random.default_rng(1)
    ref = rng.integers(20, 300, 30)
    frames = []
    for name, quality in (("gpt4_1106_preview", None), ("short", -1.0), ("long", 0.5), ("even", 0.0)):
        chars = ref.copy() if quality is None else np.maximum(1, ref + rng.integers(-150, 150, 30))
        pref = np.full(30, 0.5) if quality is None else 1 / (1 + np.exp(-quality - (chars - ref) / 100))
        frames.append(pd.DataFrame({"model": name, "index": range(30), "preference": pref,
                                    "model_output_chars": chars, "reference_output_chars": ref}))
    frame = pd.concat(frames, ignore_index=True)
    frame.to_csv(folder / "preferences.csv.gz", index=False)
    return frame


def test_the_table_shows_published_values_differences_and_the_summary(tmp_path):
    frame = annotations(tmp_path)
    pd.DataFrame({"model": ["long", "short", "gpt4_1106_preview"], "length_controlled_winrate": [40.0, 30.0, 50.0],
                  "win_rate": [0, 0, 50.0]}).to_csv(tmp_path / "board.csv", index=False)
    ours = lc.win_rates(frame)
    proc = bench("alpacaeval", str(tmp_path / "preferences.csv.gz"), "--leaderboard", str(tmp_path / "board.csv"),
                 check=0)
    assert "published LC" in proc.stdout and "LC diff" in proc.stdout and "±" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if " long " in line)
    assert f"{ours.loc['long', 'lc_win_rate'] - 40:.2f}" in row and f"{ours.loc['long', 'win_rate']:.2f}" in row
    even = next(line for line in proc.stdout.splitlines() if " even " in line)
    assert "–" in even                                                 # not on the board
    (n, mean, worst, model, _, _), = SUMMARY.findall(proc.stdout)
    gaps = (ours.loc[["long", "short", "gpt4_1106_preview"], "lc_win_rate"] - [40.0, 30.0, 50.0]).abs()
    assert int(n) == 3 and float(mean) == pytest.approx(gaps.mean(), abs=0.006)
    assert float(worst) == pytest.approx(gaps.max(), abs=0.006) and model == gaps.idxmax()
    assert "regulariser: none" in proc.stdout
    plain = bench("alpacaeval", str(tmp_path / "preferences.csv.gz"), check=0).stdout
    assert "published LC" not in plain and "|ours - published|" not in plain


def test_the_gamed_baselines_beside_the_file_regularise_the_lc(tmp_path):
    """gamed_baselines.csv.gz and gamed_baselines_glm.csv beside FILE are used (`--gamed none` turns them off);
    the CSV is win_rates(..., gamed=...) of the library."""
    frame = annotations(tmp_path)
    ref = frame.loc[frame["model"] == "gpt4_1106_preview", "reference_output_chars"].to_numpy()
    pd.concat([pd.DataFrame({"model": name, "index": range(30), "model_output_chars": (ref * k).astype(int),
                             "reference_output_chars": ref}) for name, k in (("gpt4_1106_preview_verbose", 1.5),
                                                                             ("gpt4_1106_preview_concise", 0.5))]
              ).to_csv(tmp_path / lc.GAMED_FILES[0], index=False)
    pd.DataFrame({"model": ["gpt4_1106_preview_verbose", "gpt4_1106_preview_concise"],
                  "np.tanh(std_delta_len)": [-1.5, -1.6], "instruction_difficulty": [0.8, 0.7],
                  "not_gamed_baseline.astype(float)": [0.2, -0.3], "length_controlled_winrate": [51.6, 41.9],
                  "win_rate": [64.3, 22.9]}).to_csv(tmp_path / lc.GAMED_FILES[1], index=False)
    gamed = lc.read_gamed_baselines(tmp_path)
    proc = bench("alpacaeval", str(tmp_path / "preferences.csv.gz"), "--csv", check=0)
    table = pd.read_csv(io.StringIO(proc.stdout), index_col="model")
    expected = lc.win_rates(frame, gamed=gamed)
    np.testing.assert_allclose(table["lc_win_rate"], expected.loc[table.index, "lc_win_rate"], atol=1e-3)
    assert "rebuilt from their published GLM" in proc.stderr and "gpt4_1106_preview_verbose" in proc.stderr
    off = pd.read_csv(io.StringIO(bench("alpacaeval", str(tmp_path / "preferences.csv.gz"), "--csv", "--gamed",
                                        "none", check=0).stdout), index_col="model")
    np.testing.assert_allclose(off["lc_win_rate"], lc.win_rates(frame).loc[off.index, "lc_win_rate"], atol=1e-3)
    assert (off["lc_win_rate"] - table["lc_win_rate"]).abs().max() > 1e-3


@pytest.mark.parametrize("args, message", [
    (["--leaderboard", "{tmp}/none.csv"], "leaderboard '{tmp}/none.csv' not found"),
    (["--leaderboard", "{tmp}/board.csv"], "board.csv lacks column(s) length_controlled_winrate"),
    (["--gamed", "{tmp}"], "gamed baselines: '{tmp}/gamed_baselines.csv.gz' not found"),
])
def test_bad_leaderboard_or_gamed_baselines_are_one_line_errors(tmp_path, args, message):
    annotations(tmp_path)
    (tmp_path / "board.csv").write_text("model,win_rate\nlong,3\n")
    proc = bench("alpacaeval", str(tmp_path / "preferences.csv.gz"), *[a.format(tmp=tmp_path) for a in args],
                 check=2)
    assert proc.stderr.startswith("error: ") and message.format(tmp=tmp_path) in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""
