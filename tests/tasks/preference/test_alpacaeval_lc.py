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
def published(annotations, difficulty):
    """(our win rates, the leaderboard) for the 30 models whose GPT-4-turbo annotations are published."""
    ours = lc.win_rates(annotations, difficulty=difficulty)
    board = pd.read_csv(DATA / "leaderboard.csv", index_col="model")
    return ours, board.loc[ours.index]


@needs_data
def test_raw_and_lc_win_rates_match_the_published_leaderboard(published):
    """Measured: raw WR equal to 1e-9 points; LC mean |ours − published| 0.64 points, Spearman 0.988."""
    ours, board = published
    assert len(ours) == 30 and ours.loc[lc.BASELINE, "lc_win_rate"] == 50.0
    assert (ours["win_rate"] - board["win_rate"]).abs().max() < 0.01
    gap = (ours["lc_win_rate"] - board["length_controlled_winrate"]).abs()
    assert gap.mean() < 1.0
    assert spearmanr(ours["lc_win_rate"], board["length_controlled_winrate"]).statistic > 0.98
    # the per-model fit alone (the 5.5 points) is far off: the difficulty term is what closes the gap
    assert (ours["lc_win_rate"] - ours["win_rate"]).abs().mean() > 3 * gap.mean()


@needs_data
def test_a_model_missing_an_instruction_is_fitted_the_way_the_package_looks_difficulties_up(annotations, difficulty,
                                                                                            published):
    """gpt35_turbo_instruct lacks instruction 409. The package reads γ by the row's position among the model's
    annotations, so from 409 on its rows take the next instruction's γ; the published LC carries that (and its
    published γ weight, 0.45, is half the others'). Measured: 0.65 points off by position, 2.92 by index."""
    ours, board = published
    model = "gpt35_turbo_instruct"
    assert 409 not in set(annotations.loc[annotations["model"] == model, "index"])
    by_index = lc.win_rates(annotations[annotations["model"] == model], difficulty=difficulty, lookup="index")
    published_lc = board.loc[model, "length_controlled_winrate"]
    assert abs(ours.loc[model, "lc_win_rate"] - published_lc) < 1.0 < 2.5 < abs(by_index.loc[model, "lc_win_rate"]
                                                                                - published_lc)
    complete = "jina-chat"                                       # all 805 instructions: both lookups agree
    both = [lc.win_rates(annotations[annotations["model"] == complete], difficulty=difficulty, lookup=how)
            for how in ("position", "index")]
    assert both[0].loc[complete, "lc_win_rate"] == both[1].loc[complete, "lc_win_rate"]


@needs_data
@pytest.mark.xfail(strict=True, reason="measured max 3.52 points (jina-chat; claude-2.1 2.86, claude-instant-1.2 "
                   "2.15): the published fits are regularised towards the gamed baselines' annotations "
                   "(gpt4_1106_preview_verbose / _concise), which the published data set lacks; they anchor the "
                   "length weight: jina-chat's is -2.83 in our fit, -2.20 in the published one")
def test_lc_win_rate_is_within_3_points_of_the_published_one_for_every_model(published):
    ours, board = published
    assert (ours["lc_win_rate"] - board["length_controlled_winrate"]).abs().max() < 3.0


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
    for i, name in enumerate(names):
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
