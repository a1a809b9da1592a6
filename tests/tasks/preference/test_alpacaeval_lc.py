"""AlpacaEval 2.0's length-controlled win rate: against the published leaderboard, and piece by piece against the
`alpaca_eval` package's own code (its fitter, its gamed-baseline regularisation, its notebook's joint formula)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from tasks.preference import _alpacaeval_lc as lc

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "alpacaeval"
needs_data = pytest.mark.skipif(not (DATA / "preferences.csv.gz").is_file(),
                                reason=f"the published AlpacaEval annotations are not at {DATA}")


@pytest.fixture(scope="module")
def annotations():
    return lc.read_annotations(DATA / "preferences.csv.gz")


@pytest.fixture(scope="module")
def difficulty(annotations):
    return lc.instruction_difficulties(annotations)


@pytest.fixture(scope="module")
def gamed():
    return lc.read_gamed_baselines(DATA)


@pytest.fixture(scope="module")
def published(annotations, difficulty, gamed):
    """(our win rates, the leaderboard) for the 30 models whose GPT-4-turbo annotations are published, the LC
    regularised towards the gamed baselines rebuilt from their published GLM."""
    ours = lc.win_rates(annotations, difficulty=difficulty, gamed=gamed)
    board = pd.read_csv(DATA / "leaderboard.csv", index_col="model")
    return ours, board.loc[ours.index]


@needs_data
def test_raw_and_lc_win_rates_match_the_published_leaderboard(published):
    """Measured: raw WR equal to 1e-9 points; LC |ours − published| 0.32 points on average, 1.61 at worst
    (claude-2.1), Spearman 0.997."""
    ours, board = published
    assert len(ours) == 30 and ours.loc[lc.BASELINE, "lc_win_rate"] == 50.0
    assert (ours["win_rate"] - board["win_rate"]).abs().max() < 1e-6
    gap = (ours["lc_win_rate"] - board["length_controlled_winrate"]).abs()
    assert gap.mean() < 0.5 and gap.max() < 2.0
    assert spearmanr(ours["lc_win_rate"], board["length_controlled_winrate"]).statistic > 0.99
    # the per-model fit alone (the 5.5 points) is far off: the difficulty term is what closes the gap
    assert (ours["lc_win_rate"] - ours["win_rate"]).abs().mean() > 3 * gap.mean()


@needs_data
def test_the_regulariser_is_what_brings_the_worst_model_within_2_points(annotations, difficulty, published):
    """Without the gamed baselines' rows (the package's length_controlled_noreg) the same γ gives 0.56 points on
    average and 2.67 at worst (jina-chat, whose length weight only the gamed rows anchor); with them 0.32, 1.61."""
    ours, board = published
    noreg = lc.win_rates(annotations, difficulty=difficulty)
    gap = (noreg["lc_win_rate"] - board["length_controlled_winrate"]).abs()
    assert gap.max() > 2.5 and gap.idxmax() == "jina-chat" and gap.mean() > 0.5
    assert abs(ours.loc["jina-chat", "lc_win_rate"] - board.loc["jina-chat", "length_controlled_winrate"]) < 0.5
    assert (noreg["win_rate"] == ours["win_rate"]).all()


@needs_data
def test_the_gamed_baselines_own_lc_comes_back_to_the_published_values(difficulty, gamed):
    """Each gamed baseline's LC fitted from its rebuilt rows (its own rows plus both baselines' at weight λ/2, as
    the package fits it). The raw win rates are what the calibration of γ matches; the LC is not used in it.
    Measured: 50.32 vs 51.58 (verbose), 42.87 vs 41.90 (concise)."""
    table = lc.gamed_baseline_win_rates(gamed, difficulty)
    assert set(table.index) == {"gpt4_1106_preview_verbose", "gpt4_1106_preview_concise"}
    np.testing.assert_allclose(table["win_rate"], table["published_win_rate"], atol=1e-6)
    assert (table["lc_win_rate"] - table["published_lc"]).abs().max() < 2.0
    # the length game is gone: raw 64.3 / 22.9, LC about 50 for both
    assert table.loc["gpt4_1106_preview_verbose", "lc_win_rate"] < 55 < 60 < table.loc["gpt4_1106_preview_verbose",
                                                                                         "win_rate"]
    assert table.loc["gpt4_1106_preview_concise", "win_rate"] < 25 < 40 < table.loc["gpt4_1106_preview_concise",
                                                                                       "lc_win_rate"]
    alpha, beta = lc.calibrate_difficulty(difficulty, gamed)
    assert alpha == pytest.approx(0.184, abs=0.01) and beta == pytest.approx(0.549, abs=0.01)


GAMED_MODEL = "FuseChat-Llama-3.2-3B-Instruct"    # the shared model closest to the baseline (raw 51.3, 1976 chars)


@needs_data
def test_a_length_game_moves_raw_a_lot_and_lc_less_than_a_third_as_much(annotations, difficulty, gamed):
    """GAMED_MODEL's annotations made verbose and concise the way the published gamed baselines are
    (`length_gamed_version`: lengths scaled per instruction, preferences shifted by the pairs' length effect, the
    quality untouched). Measured: raw 51.30 -> 59.86 (verbose) / 36.51 (concise); LC 54.04 -> 56.15 / 49.78;
    without the regulariser LC 53.56 -> 56.33 / 45.67, the concise game then worth more than a third of raw's."""
    calibrated, anchor = lc.regulariser(difficulty, gamed)
    original = annotations[annotations["model"] == GAMED_MODEL]
    versions = {name: lc.length_gamed_version(original, gamed, name, calibrated, anchor) for name in gamed.glm.index}
    assert versions["gpt4_1106_preview_verbose"]["model_output_chars"].mean() > 1.15 * original[
        "model_output_chars"].mean() > 1.15 * 1.6 * versions["gpt4_1106_preview_concise"]["model_output_chars"].mean()
    scores = {name: lc.win_rates(frame, difficulty=difficulty, gamed=gamed).loc[GAMED_MODEL]
              for name, frame in {"original": original, **versions}.items()}
    noreg = {name: lc.win_rates(frame, difficulty=difficulty).loc[GAMED_MODEL]
             for name, frame in {"original": original, **versions}.items()}
    for name in versions:
        raw_move = abs(scores[name]["win_rate"] - scores["original"]["win_rate"])
        lc_move = abs(scores[name]["lc_win_rate"] - scores["original"]["lc_win_rate"])
        assert raw_move > 8 and lc_move < raw_move / 3, (name, raw_move, lc_move)
    concise = "gpt4_1106_preview_concise"
    assert (abs(noreg[concise]["lc_win_rate"] - noreg["original"]["lc_win_rate"])
            > abs(scores[concise]["win_rate"] - scores["original"]["win_rate"]) / 3)


@needs_data
def test_a_model_missing_an_instruction_is_fitted_the_way_the_package_looks_difficulties_up(annotations, difficulty,
                                                                                            published):
    """gpt35_turbo_instruct lacks instruction 409. The package reads γ by the row's position among the model's
    annotations, so from 409 on its rows take the next instruction's γ; the published LC carries that (and its
    published γ weight, 0.45, is half the others'). Measured (no regulariser, γ of the refined grid): 0.41 points
    off by position, 3.40 by index."""
    ours, board = published
    model = "gpt35_turbo_instruct"
    assert 409 not in set(annotations.loc[annotations["model"] == model, "index"])
    alone = annotations[annotations["model"] == model]
    by_position, by_index = (lc.win_rates(alone, difficulty=difficulty, lookup=how).loc[model, "lc_win_rate"]
                             for how in ("position", "index"))
    published_lc = board.loc[model, "length_controlled_winrate"]
    assert abs(by_position - published_lc) < 1.0 < 2.0 < abs(by_index - published_lc)
    complete = "jina-chat"                                       # all 805 instructions: both lookups agree
    both = [lc.win_rates(annotations[annotations["model"] == complete], difficulty=difficulty, lookup=how)
            for how in ("position", "index")]
    assert both[0].loc[complete, "lc_win_rate"] == both[1].loc[complete, "lc_win_rate"]


# ---- the pieces against alpaca_eval's own code (offline parts only) -------------------------------------------------

alpaca_eval = pytest.importorskip("alpaca_eval")


def synthetic(n_models=6, n_instructions=80, seed=0, gamed=False) -> tuple[pd.DataFrame, np.ndarray]:
    """Annotations drawn from the GLM itself: known difficulties γ, per-model quality, length and γ weights."""
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0, 1.5, n_instructions)
    ref = rng.integers(200, 3000, n_instructions)
    rows = []
    names = [f"m{i}" for i in range(n_models)] + (["gpt4_1106_preview_verbose", "gpt4_1106_preview_concise"]
                                                  if gamed else [])
    for name in names:
        quality = 0.0 if "gpt4" in name else rng.normal(-1, 1)
        scale = 1.6 if "verbose" in name else 0.5 if "concise" in name else rng.uniform(0.3, 1.3)
        chars = np.maximum(1, (ref * scale + rng.normal(0, 300, n_instructions))).astype(int)
        delta = ref - chars
        logit = quality - 1.5 * np.tanh(delta / delta.std(ddof=1)) + rng.uniform(0.5, 1.5) * gamma
        pref = np.clip(lc.sigmoid(logit) + rng.normal(0, 0.05, n_instructions), 0, 1)
        rows.append(pd.DataFrame({"model": name, "index": np.arange(n_instructions), "preference": pref,
                                  "model_output_chars": chars, "reference_output_chars": ref}))
    return pd.concat(rows, ignore_index=True), gamma


def test_our_fitter_is_the_packages_fit_logistic_regression_cv():
    """Same coefficients as glm_winrate.fit_LogisticRegressionCV (5-fold CV over C, soft labels), with and
    without sample weights (its metadata-routing switch is undone by config_context). Measured: equal to the last
    digit with weights; without, the CV losses of C = 1292 and C = 10⁴ tie to ~1e-9 (the penalty no longer
    binds) and the two codes break the tie differently, which moves the coefficients by 3e-5."""
    import sklearn
    from alpaca_eval.metrics.glm_winrate import fit_LogisticRegressionCV

    rng = np.random.default_rng(0)
    X = np.c_[np.tanh(rng.normal(size=400)), rng.normal(size=400), np.ones(400)]
    y = np.clip(lc.sigmoid(X @ [-1.2, 0.8, -0.5]) + rng.normal(0, 0.05, 400), 0, 1)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(preference=y)
    for weight in (None, rng.uniform(0.1, 1.0, 400)):
        ours, C = lc.soft_logistic_l1_cv(X, y, sample_weight=weight)
        with sklearn.config_context():
            theirs = fit_LogisticRegressionCV(frame, "preference", is_ytrue_proba=True, n_splits=5,
                                              sample_weight=weight)
        np.testing.assert_allclose(ours, theirs.coef_[0], atol=1e-4)
        if weight is not None:
            np.testing.assert_allclose(ours, theirs.coef_[0], atol=1e-12)
            assert C == pytest.approx(theirs.C_[0])


def test_a_models_lc_with_gamed_baselines_is_the_packages_length_controlled_v1(monkeypatch, tmp_path):
    """The package's get_length_controlled_winrate (GLM length_controlled_v1: λ = 0.2, 5-fold CV) with its hub
    file df_gamed.csv replaced by our synthetic gamed baselines and difficulties: the same LC as ours."""
    from alpaca_eval.metrics import glm_winrate

    frame, gamma = synthetic(gamed=True)
    difficulty = pd.Series(gamma, index=pd.RangeIndex(len(gamma), name="index"))
    gamed = lc.gamed_rows(frame, difficulty)
    assert len(gamed) == 2 * len(gamma)
    hub = pd.DataFrame({"model": np.repeat(["v", "c"], len(gamma)), "index": np.tile(np.arange(len(gamma)), 2),
                        "preference": gamed["preference"], "std_delta_len": np.arctanh(gamed["tanh_len"]),
                        "instruction_difficulty": gamed["gamma"], "not_gamed_baseline": False})
    hub.to_csv(tmp_path / "df_gamed.csv", index=False)
    monkeypatch.setattr(glm_winrate, "hf_hub_download", lambda **kwargs: str(tmp_path / "df_gamed.csv"))
    model = frame[frame["model"] == "m1"]
    package_input = pd.DataFrame({"index": model["index"],
                                  "output_1": ["r" * k for k in model["reference_output_chars"]],
                                  "output_2": ["m" * k for k in model["model_output_chars"]],
                                  "preference": 1.0 + model["preference"], "generator_1": "gpt4_1106_preview",
                                  "generator_2": "m1", "annotator": "weighted_alpaca_eval_gpt4_turbo"})
    theirs = glm_winrate.get_length_controlled_winrate(package_input, save_weights_dir=None)
    ours = lc.fit_model(model["preference"], model["model_output_chars"], model["reference_output_chars"], gamma, gamed)
    assert ours["lc_win_rate"] * 100 == pytest.approx(theirs["length_controlled_winrate"], abs=1e-8)
    assert ours["lc_standard_error"] * 100 == pytest.approx(theirs["lc_standard_error"], abs=1e-8)
    unregularised = lc.fit_model(model["preference"], model["model_output_chars"], model["reference_output_chars"],
                                 gamma)
    noreg = glm_winrate.get_length_controlled_winrate(package_input, glm_name="length_controlled_noreg",
                                                      save_weights_dir=None)
    # without weights the near-tie of large Cs (test above) moves it by 2e-4 points
    assert unregularised["lc_win_rate"] * 100 == pytest.approx(noreg["length_controlled_winrate"], abs=1e-3)
    assert abs(unregularised["lc_win_rate"] - ours["lc_win_rate"]) > 3e-4     # the gamed rows move it (measured 6e-4)


def test_the_joint_design_is_the_authors_notebook_formula():
    """Our sparse design equals patsy's dmatrix of the notebook's joint formula, column for column."""
    from patsy import dmatrix

    frame, _ = synthetic(n_models=3, n_instructions=12, gamed=True)
    design, _, models, levels = lc.joint_design(frame)
    data = frame.assign(tanh_len=lc._tanh_length(frame),
                        not_gamed_baseline=~frame["model"].str.contains("gpt4_1106_preview"))
    theirs = dmatrix("C(model, levels=models):tanh_len + C(model, levels=models) + C(index) "
                     "+ not_gamed_baseline.astype(float) - 1", data, return_type="dataframe")
    k = len(models)
    order = ([f"C(model, levels=models)[{m}]:tanh_len" for m in models]
             + [f"C(model, levels=models)[{m}]" for m in models]
             + [f"C(index)[T.{i}]" for i in levels[1:]] + ["not_gamed_baseline.astype(float)"])
    assert design.shape == (len(frame), 2 * k + len(levels))
    np.testing.assert_allclose(design.toarray(), theirs[order].to_numpy())


def test_joint_fit_recovers_the_generating_difficulties():
    frame, gamma = synthetic(n_models=8, n_instructions=60, seed=1)
    fitted = lc.instruction_difficulties(frame)
    assert fitted.iloc[0] == 0.0 and len(fitted) == 60
    assert np.corrcoef(fitted.to_numpy(), gamma)[0, 1] > 0.9


def test_alpaca_eval_annotations_json_schema(tmp_path):
    """AlpacaEval's preference 2 = the model wins, 1 = the baseline, 0 = a draw (½), null = none."""
    rows = [{"instruction": "a", "output_1": "ref one", "generator_1": "gpt4_1106_preview", "output_2": "x",
             "generator_2": "m", "preference": 2.0},
            {"instruction": "b", "output_1": "ref", "output_2": "longer answer", "generator_2": "m", "preference": 0},
            {"instruction": "c", "output_1": "r", "output_2": "yy", "generator_2": "m", "preference": None},
            {"instruction": "a", "output_1": "ref one", "output_2": "zz", "generator_2": "n", "preference": 1.25}]
    (tmp_path / "annotations.json").write_text(json.dumps(rows))
    frame = lc.read_annotations(tmp_path / "annotations.json")
    assert frame["index"].tolist() == [0, 1, 2, 0] and frame["model"].tolist() == ["m", "m", "m", "n"]
    np.testing.assert_allclose(frame["preference"], [1.0, 0.5, np.nan, 0.25])
    assert (frame["model_output_chars"].tolist() == [1, 13, 2, 2]
            and frame["reference_output_chars"].tolist() == [7, 3, 1, 7])
    with pytest.raises(ValueError, match="the LC fit needs at least 5 annotated instructions per model"):
        lc.win_rates(frame, difficulty=pd.Series(0.0, index=[0, 1, 2]))


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "holds a list of objects"),
    ('[{"instruction": "a", "output_1": "r"}]', "lack field"),
    ("{not json", "cannot read"),
])
def test_bad_annotation_files_are_one_line_errors(tmp_path, content, message):
    (tmp_path / "a.json").write_text(content)
    with pytest.raises(ValueError, match=message):
        lc.read_annotations(tmp_path / "a.json")
    (tmp_path / "p.csv").write_text("model,index,preference,model_output_chars,reference_output_chars\nm,0,1.5,3,4\n")
    with pytest.raises(ValueError, match=r"preference must lie in \[0, 1\]"):
        lc.read_annotations(tmp_path / "p.csv")
    with pytest.raises(ValueError, match="not found"):
        lc.read_annotations(tmp_path / "none.csv")


# ---- the regulariser rebuilt from a GLM, on synthetic gamed baselines whose real rows we have ----------------------

def gamed_from_their_fits(frame: pd.DataFrame, difficulty: pd.Series) -> lc.GamedBaselines:
    """What would be published of the synthetic gamed baselines: their lengths, and their GLM fitted as the
    package fits it (their own rows plus both baselines' real rows), with their raw and LC win rates."""
    real = lc.gamed_rows(frame, difficulty)
    rows = frame[frame["model"].str.startswith(lc.BASELINE + "_")]
    glm = {}
    for name, own in rows.groupby("model"):
        fit = lc.fit_model(own["preference"], own["model_output_chars"], own["reference_output_chars"],
                           difficulty.reindex(own["index"]).to_numpy(), real)
        glm[name] = {"w_len": fit["w_len"], "w_gamma": fit["w_gamma"], "w_model": fit["w_model"],
                     "length_controlled_winrate": 100 * fit["lc_win_rate"], "win_rate": 100 * own["preference"].mean()}
    return lc.GamedBaselines(rows[["model", "index", "model_output_chars", "reference_output_chars"]]
                             .reset_index(drop=True), pd.DataFrame(glm).T)


@pytest.mark.parametrize("seed", [0, 1])
def test_rebuilt_soft_labels_regularise_as_the_real_annotations_do(seed):
    """The module doc's argument: the gamed baselines' expected preferences under their own fitted GLM give every
    model's fit the objective their real labels give, up to a constant. Measured: LC within 0.03 points of the
    fit with the real rows (up to 3.9 points off without any); the calibration of γ is then the identity."""
    frame, gamma = synthetic(n_models=6, n_instructions=300, seed=seed, gamed=True)
    difficulty = pd.Series(gamma, index=pd.RangeIndex(len(gamma), name="index"))
    gamed = gamed_from_their_fits(frame, difficulty)
    others = frame[~frame["model"].isin(gamed.glm.index)]
    real = lc.win_rates(frame, difficulty=difficulty).drop(index=gamed.glm.index)["lc_win_rate"]
    rebuilt = lc.win_rates(others, difficulty=difficulty, gamed=gamed)["lc_win_rate"]
    none = lc.win_rates(others, difficulty=difficulty)["lc_win_rate"]
    assert (rebuilt - real).abs().max() < 0.05 and (none - real).abs().max() > 1.0
    alpha, beta = lc.calibrate_difficulty(difficulty, gamed)
    assert abs(alpha) < 0.01 and abs(beta - 1) < 0.01
    # γ on another scale (as ours is against the published): the calibration finds the map back
    alpha, beta = lc.calibrate_difficulty(0.3 + 0.6 * difficulty, gamed)
    assert alpha == pytest.approx(0.3, abs=0.01) and beta == pytest.approx(0.6, abs=0.01)
    shifted = lc.win_rates(others, difficulty=0.3 + 0.6 * difficulty, gamed=gamed)["lc_win_rate"]
    assert (shifted - real).abs().max() < 0.05


def test_gamed_baseline_files_errors_are_one_line(tmp_path):
    with pytest.raises(ValueError, match="gamed_baselines.csv.gz' not found"):
        lc.read_gamed_baselines(tmp_path)
    assert lc.find_gamed_baselines(tmp_path) is None
    pd.DataFrame({"model": ["g"] * 3, "index": [0, 1, 2], "model_output_chars": [5, 6, 7],
                  "reference_output_chars": [4, 4, 4]}).to_csv(tmp_path / lc.GAMED_FILES[0], index=False)
    (tmp_path / lc.GAMED_FILES[1]).write_text("model,w\ng,1\n")
    with pytest.raises(ValueError, match="gamed_baselines_glm.csv lacks column"):
        lc.read_gamed_baselines(tmp_path)
    glm = pd.DataFrame({"model": ["h"], **{term: [0.5] for term in lc.GLM_TERMS}, "length_controlled_winrate": [50.0],
                        "win_rate": [60.0]})
    glm.to_csv(tmp_path / lc.GAMED_FILES[1], index=False)
    with pytest.raises(ValueError, match="name different models"):
        lc.read_gamed_baselines(tmp_path)
    glm.assign(model="g").to_csv(tmp_path / lc.GAMED_FILES[1], index=False)
    gamed = lc.find_gamed_baselines(tmp_path)
    assert gamed.glm.loc["g", "w_len"] == 0.5 and len(gamed.lengths) == 3
