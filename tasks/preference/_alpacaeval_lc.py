"""AlpacaEval 2.0's length-controlled (LC) win rate: the published GLM, fitted offline.

The metric of Dubois et al. 2024 ("Length-Controlled AlpacaEval", arXiv 2404.04475) as the `alpaca_eval`
package computes it (`metrics/glm_winrate.py`, GLM `length_controlled_v1`). For a model m against the baseline
b (gpt4_1106_preview) on instruction x, with the judge's soft preference p ∈ [0, 1] for m:

    logit P(m ≻ b | x) = w_len·tanh(Δ / std Δ) + w_γ·γ_x + w_m·1[m is not a gamed baseline]       (no intercept)

Δ = len(b's output) − len(m's output) in characters, std over m's instructions (pandas, ddof 1); γ_x is the
instruction's difficulty, shared by all models; w_len, w_γ, w_m are m's own. The LC win rate is the model
predicted with the length term at zero, averaged over m's instructions: 100 · mean_x σ(w_m + w_γ·γ_x); its
standard error is the package's (the s.e.m. of those predictions, parameters taken as known). The baseline's
own LC is 50 by construction.

The fit is the package's `fit_LogisticRegressionCV`, reproduced here with scikit-learn (tested equal to it):
soft labels by duplicating every row with label 1 (weight p) and label 0 (weight 1 − p), an L1-penalised
logistic regression without intercept (liblinear, random_state 123), its C chosen among 10 values
logspace(−4, 4) by 5-fold GroupKFold (a row's two copies in one fold) on the continuous log loss, then refitted
on all rows.

Regularisation towards the gamed baselines (the package's λ = 0.2, `_get_featurized_data` in
`src/alpaca_eval/metrics/glm_winrate.py` of tatsu-lab/alpaca_eval, and `disjoint_optimization_` in its
`notebooks/notebook_helpers.py`): the rows of the baseline prompted to be verbose and to be concise
(`<baseline>_verbose`, `<baseline>_concise`, not-gamed indicator 0, so no model term) join every model's fit with
weight λ/2 per row; the length and difficulty weights that explain them (about the baseline's quality, another
length) anchor m's. A gamed baseline's own LC is fitted the same way: its rows as a model's (indicator 1) plus
both baselines' rows. When the annotations given hold the gamed baselines, their rows are used as they are.
Their judge annotations are not public in a usable size, though, so `regulariser` rebuilds them (`GamedBaselines`:
their output lengths per instruction and their published GLM, the package's
`metrics/weights/weighted_alpaca_eval_gpt4_turbo/length_controlled_v1/baseline_gpt4_1106_preview.csv`): per
instruction, the soft label σ(w_len·tanh(Δ/std Δ) + w_γ·γ_x + w_model) with the baseline's published weights, its
expected preference under its own published fit. The approximation: the published fit had the judge's own labels
p_x (mostly near 0 or 1), we have their expected values q_x. The log loss is linear in the label, so the two give
objectives that differ by Σ_x (p_x − q_x)·(w_len·t_x + w_γ·γ_x) plus a constant; at the gamed baseline's own
optimum the residuals p − q are orthogonal to its features t and γ (its score equations), so the difference
vanishes, up to what that fit's L1 penalty and its own regulariser rows bend, and except inside the
cross-validation's folds (which choose C).
Tested on synthetic gamed baselines: the LC with their rebuilt rows is that with their real rows within 0.05
points (without any, up to 4 points off). What does not transfer is γ: the published weights multiply the
published γ, which we do not have, and ours is on another scale (see below). `calibrate_difficulty` maps ours
affinely, (γ − α)/β, to the scale on which the rebuilt rows' mean equals each baseline's published raw win rate
(the score equation of the model term: a logistic fit with that column reproduces its mean label); the whole
fit then uses the mapped γ (for the model's own rows an affine map of γ is absorbed by w_m and w_γ; for the gamed
rows, without a model term, it is not). The check: each gamed baseline's own LC, fitted from its rebuilt rows,
against its published LC (not used in the calibration): 50.32 vs 51.58 (verbose), 42.87 vs 41.90 (concise).

Instruction difficulty γ (`instruction_difficulties`). The package downloads γ from the hub
(`instruction_difficulty.csv` of tatsu-lab/alpaca_eval); it is not available offline, so we estimate it the
way its authors did (their notebook `notebooks/instruction_difficulty.ipynb`): one joint fit of all the given
models' annotations (rows without a preference or with an empty output dropped), formula
`C(model):tanh(Δ/std_m) + C(model) + C(index) + not_gamed − 1` (a bias and a length slope per model, one
dummy per instruction with instruction 0 as the reference level, so γ_0 = 0), with the same L1 / CV fit; γ_x
is instruction x's dummy weight. The published γ was fitted this way on the leaderboard of early 2024 (more
models, including the gamed baselines); ours on the models given, so it differs by the model set — the
notebook reports that γ fitted on different model sets correlate highly and that the LC is insensitive to it.
With fewer models each γ_x is noisier, and a noisy γ bends the length weights: the joint fit's C is chosen by
the same cross-validation on a grid twice as dense near the best of the package's 10 values
(`DIFFICULTY_REFINE`). On the 30 shared models the CV loss is flat between C = 1 and 2.8 (1.2013 and 1.2089) and
the package's grid has only 0.36, 2.78, 21.5 there; the denser grid (and one 4x denser) picks C = 1. Measured
(`benchmarks/alpacaeval_lc.py`): LC within 0.32 points of the published on average, 1.61 at worst (claude-2.1);
with C = 2.78, 0.51 and 2.31; without the regulariser, 0.56 and 2.67 (jina-chat).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

BASELINE = "gpt4_1106_preview"          # AlpacaEval 2.0's reference model (the judge compares each model with it)
LAMBDA = 0.2                            # regularize_to_baseline_lambda of length_controlled_v1
COLUMNS = ("model", "index", "preference", "model_output_chars", "reference_output_chars")
DIFFICULTY_REFINE = 2                   # the joint γ fit's C grid, 2x denser near its best point (module doc)


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


def soft_logistic_l1_cv(X, y, sample_weight=None, n_splits: int = 5, n_cs: int = 10,
                        refine: int = 1) -> tuple[np.ndarray, float]:
    """(coefficients, chosen C) of alpaca_eval's fit_LogisticRegressionCV(is_ytrue_proba=True): see the module doc.

    X: (n, d) dense or scipy sparse; y: (n,) soft labels in [0, 1]; sample_weight: (n,) or None. `refine` > 1
    also tries, between the best grid value's two neighbours, the points of the grid `refine` times denser
    (logspace(−4, 4, (n_cs − 1)·refine + 1)); the package's fit is refine = 1."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    y = np.asarray(y, float)
    n = len(y)
    if 0 < n_splits and n < n_splits:
        raise ValueError(f"the LC fit needs at least {n_splits} annotated instructions per model ({n_splits}-fold "
                         f"cross-validation), got {n}")
    X2 = sp.vstack([X, X]).tocsr() if sp.issparse(X) else np.vstack([X, X])
    label = np.r_[np.ones(n), np.zeros(n)]
    prob = np.r_[y, 1.0 - y]                                   # the weight of each copy: p, then 1 − p
    weight = np.ones(2 * n) if sample_weight is None else np.r_[sample_weight, sample_weight].astype(float)
    groups = np.r_[np.arange(n), np.arange(n)]

    def fit(rows, C):
        model = LogisticRegression(C=C, l1_ratio=1.0, solver="liblinear", fit_intercept=False, random_state=123)
        return model.fit(X2[rows], label[rows], sample_weight=(prob * weight)[rows])

    if n_splits <= 0:
        return fit(np.arange(2 * n), 100.0).coef_[0], 100.0    # the package's n_splits = 0 branch (C = 100)
    folds = list(GroupKFold(n_splits).split(X2, label, groups))

    def cv_loss(C: float) -> float:
        loss = 0.0
        for train, test in folds:
            target = np.where(label[test] == 1, prob[test], 1.0 - prob[test])    # both copies: the soft label p
            q = np.clip(fit(train, C).predict_proba(X2[test])[:, 1], 1e-15, 1 - 1e-15)
            loss += -np.mean((target * np.log(q) + (1 - target) * np.log(1 - q)) * weight[test])
        return loss

    cs = np.logspace(-4, 4, n_cs)
    losses = {float(C): cv_loss(C) for C in cs}
    best = int(np.argmin(list(losses.values())))               # sklearn: argmax of the summed scores, first on ties
    if refine > 1 and n_cs > 1:
        low, high = cs[max(best - 1, 0)], cs[min(best + 1, n_cs - 1)]
        fine = np.logspace(-4, 4, (n_cs - 1) * refine + 1)
        losses.update({float(C): cv_loss(C) for C in fine[(fine > low * (1 + 1e-9)) & (fine < high * (1 - 1e-9))]
                       if not np.isclose(C, cs[best], rtol=1e-9)})
    chosen = min(sorted(losses), key=losses.__getitem__)       # the smallest C on ties
    return fit(np.arange(2 * n), chosen).coef_[0], chosen


def _is_gamed(model: str, baseline: str) -> bool:
    return baseline in model and ("verbose" in model or "concise" in model)   # the authors' rule


def _tanh_length(frame: pd.DataFrame) -> np.ndarray:
    """tanh(Δ / std Δ) per row, the std over each model's rows (0 where a model's Δ is constant)."""
    delta = (frame["reference_output_chars"] - frame["model_output_chars"]).astype(float)
    std = delta.groupby(frame["model"]).transform("std")
    ok = std.to_numpy() > 0
    return np.where(ok, np.tanh(delta.to_numpy() / np.where(ok, std.to_numpy(), 1.0)), 0.0)


def validate(annotations: pd.DataFrame) -> pd.DataFrame:
    """The annotations with the columns of `COLUMNS`, typed; ValueError naming what is wrong."""
    missing = [c for c in COLUMNS if c not in annotations.columns]
    if missing:
        raise ValueError(f"annotations lack column(s) {', '.join(missing)} (need {', '.join(COLUMNS)})")
    frame = annotations.loc[:, list(COLUMNS)].copy()
    frame["model"] = frame["model"].astype(str)
    for column in COLUMNS[1:]:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    if frame["index"].isna().any() or (frame["index"] < 0).any():
        raise ValueError("annotations need a non-negative integer 'index' on every row")
    frame["index"] = frame["index"].astype(int)
    p = frame["preference"].dropna()
    if ((p < 0) | (p > 1)).any():
        raise ValueError("preference must lie in [0, 1] (1: the model wins, ½: a tie; empty: no preference)")
    if frame[["model_output_chars", "reference_output_chars"]].isna().any().any():
        raise ValueError("model_output_chars and reference_output_chars must be numbers on every row")
    if frame.duplicated(["model", "index"]).any():
        raise ValueError("annotations repeat a (model, index) pair")
    if frame.empty:
        raise ValueError("no annotations")
    return frame.reset_index(drop=True)


def joint_design(annotations: pd.DataFrame, baseline: str = BASELINE):
    """(sparse design, preferences, models, instruction levels) of the joint difficulty fit: the columns are
    C(model):tanh(Δ/std_m) and C(model) per model (baseline first), C(index) for every instruction but the
    first level, and not_gamed; rows without a preference or with an empty output are dropped."""
    import scipy.sparse as sp

    frame = validate(annotations)
    frame = frame[frame["preference"].notna() & (frame["model_output_chars"] != 0)].reset_index(drop=True)
    models = [baseline] * (baseline in set(frame["model"])) + sorted(set(frame["model"]) - {baseline})
    m = frame["model"].map({name: i for i, name in enumerate(models)}).to_numpy()
    levels = np.sort(frame["index"].unique())                 # instruction levels; the first is the reference
    x = np.searchsorted(levels, frame["index"].to_numpy())
    n, k, rows = len(frame), len(models), np.arange(len(frame))
    other = x > 0
    design = sp.hstack([
        sp.csr_matrix((_tanh_length(frame), (rows, m)), shape=(n, k)),            # C(model):tanh(Δ/std_m)
        sp.csr_matrix((np.ones(n), (rows, m)), shape=(n, k)),                     # C(model)
        sp.csr_matrix((np.ones(other.sum()), (rows[other], x[other] - 1)), shape=(n, len(levels) - 1)),  # C(index)
        sp.csr_matrix(~frame["model"].map(lambda g: _is_gamed(g, baseline)).to_numpy()[:, None], dtype=float),
    ]).tocsr()
    return design, frame["preference"].to_numpy(), models, levels


def instruction_difficulties(annotations: pd.DataFrame, baseline: str = BASELINE,
                             refine: int = DIFFICULTY_REFINE) -> pd.Series:
    """γ_x per instruction index, from the joint fit of all the models given (see the module doc); its L1
    strength C by the package's cross-validation on a grid `refine` times denser near the best value."""
    design, preference, models, levels = joint_design(annotations, baseline)
    coef, _ = soft_logistic_l1_cv(design, preference, refine=refine)
    k = len(models)
    return pd.Series(np.r_[0.0, coef[2 * k: 2 * k + len(levels) - 1]], index=pd.Index(levels, name="index"),
                     name="instruction_difficulty")


def _features(tanh_len: np.ndarray, gamma: np.ndarray, not_gamed: float) -> np.ndarray:
    return np.c_[tanh_len, gamma, np.full(len(gamma), not_gamed)]


def fit_model(preference, model_chars, reference_chars, gamma, gamed: pd.DataFrame | None = None,
              lam: float = LAMBDA) -> dict[str, float]:
    """One model's LC fit: {"lc_win_rate", "lc_standard_error"} in [0, 1] and the weights w_len, w_gamma, w_model.

    Arrays over the model's instructions (a NaN preference: predicted, not fitted); `gamma` their difficulties;
    `gamed`: rows of the gamed baselines (columns tanh_len, gamma, preference) or None."""
    preference = np.asarray(preference, float)
    delta = np.asarray(reference_chars, float) - np.asarray(model_chars, float)
    std = pd.Series(delta).std()
    tanh_len = np.tanh(delta / std) if std > 0 else np.zeros_like(delta)
    gamma = np.asarray(gamma, float)
    seen = ~np.isnan(preference)
    X, y = _features(tanh_len[seen], gamma[seen], 1.0), preference[seen]
    weight = None
    if gamed is not None and len(gamed) and lam:
        X = np.r_[_features(gamed["tanh_len"].to_numpy(), gamed["gamma"].to_numpy(), 0.0), X]
        y = np.r_[gamed["preference"].to_numpy(), y]
        weight = np.r_[np.full(len(gamed), lam / 2), np.ones(seen.sum())]   # λ/2: there are two gamed baselines
    coef, _ = soft_logistic_l1_cv(X, y, sample_weight=weight)
    predicted = sigmoid(coef[2] + coef[1] * gamma)            # the length term at zero
    return {"lc_win_rate": float(predicted.mean()), "lc_standard_error": float(pd.Series(predicted).sem()),
            "w_len": float(coef[0]), "w_gamma": float(coef[1]), "w_model": float(coef[2])}


def gamed_rows(annotations: pd.DataFrame, difficulty: pd.Series, baseline: str = BASELINE) -> pd.DataFrame:
    """The gamed baselines' fitted rows (tanh_len, gamma, preference) among the annotations (maybe none)."""
    frame = validate(annotations)
    frame = frame[frame["model"].map(lambda g: _is_gamed(g, baseline))]
    frame = frame.assign(tanh_len=_tanh_length(frame), gamma=difficulty.reindex(frame["index"]).fillna(0.0).to_numpy())
    return frame.loc[frame["preference"].notna(), ["tanh_len", "gamma", "preference"]].reset_index(drop=True)


# ---- the regulariser: the gamed baselines rebuilt from their published GLM -----------------------------------------

GAMED_FILES = ("gamed_baselines.csv.gz", "gamed_baselines_glm.csv")     # the shared data folder's names
GLM_TERMS = {"np.tanh(std_delta_len)": "w_len", "instruction_difficulty": "w_gamma",
             "not_gamed_baseline.astype(float)": "w_model"}     # the package's weight columns, ours


@dataclass(frozen=True)
class GamedBaselines:
    """What is public of the gamed baselines: their output lengths and their published GLM and win rates."""

    lengths: pd.DataFrame   # model, index, model_output_chars, reference_output_chars: one row per instruction
    glm: pd.DataFrame       # by model: w_len, w_gamma, w_model, length_controlled_winrate, win_rate (percent)


def read_gamed_baselines(folder: str | Path) -> GamedBaselines:
    """The gamed baselines of `folder` (its `GAMED_FILES`); ValueError naming the file on bad input."""
    folder = Path(folder).expanduser()
    paths = [folder / name for name in GAMED_FILES]
    for path in paths:
        if not path.is_file():
            raise ValueError(f"gamed baselines: {str(path)!r} not found")
    frames = []
    for path, need in zip(paths, (("model", "index", "model_output_chars", "reference_output_chars"),
                                  ("model", *GLM_TERMS, "length_controlled_winrate", "win_rate"))):
        try:
            frame = pd.read_csv(path)
        except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, OSError, EOFError) as exc:
            raise ValueError(f"cannot read {path.name}: {type(exc).__name__}") from None
        missing = [c for c in need if c not in frame.columns]
        if missing:
            raise ValueError(f"{path.name} lacks column(s) {', '.join(missing)}")
        numeric = frame[list(need[1:])].apply(pd.to_numeric, errors="coerce")
        if numeric.isna().any().any():
            raise ValueError(f"{path.name}: {', '.join(need[1:])} must be numbers on every row")
        frames.append(frame.assign(**numeric))
    lengths, glm = frames
    glm = glm.rename(columns=GLM_TERMS).set_index("model")[[*GLM_TERMS.values(), "length_controlled_winrate",
                                                            "win_rate"]]
    if set(lengths["model"]) != set(glm.index) or glm.index.duplicated().any():
        raise ValueError(f"{GAMED_FILES[0]} and {GAMED_FILES[1]} name different models")
    return GamedBaselines(lengths.sort_values(["model", "index"]).reset_index(drop=True), glm)


def find_gamed_baselines(folder: str | Path) -> GamedBaselines | None:
    """`read_gamed_baselines(folder)` when the folder holds both files, else None."""
    return read_gamed_baselines(folder) if all((Path(folder) / n).is_file() for n in GAMED_FILES) else None


def _expected(gamed: GamedBaselines, difficulty: pd.Series, alpha: float = 0.0, beta: float = 1.0):
    """Per gamed baseline: (its rows, tanh(Δ/std Δ), γ mapped to the published scale (γ − α)/β, the published
    GLM's expected preference σ(w_len·tanh + w_γ·γ + w_model))."""
    out = {}
    for model, rows in gamed.lengths.groupby("model", sort=False):
        w = gamed.glm.loc[model]
        tanh_len = _tanh_length(rows)
        gamma = (difficulty.reindex(rows["index"]).fillna(0.0).to_numpy() - alpha) / beta
        out[model] = rows, tanh_len, gamma, sigmoid(w["w_len"] * tanh_len + w["w_gamma"] * gamma + w["w_model"])
    return out


def calibrate_difficulty(difficulty: pd.Series, gamed: GamedBaselines) -> tuple[float, float]:
    """(α, β) such that (γ − α)/β is γ on the published difficulty's scale, as far as the gamed baselines tell.

    The published coefficients multiply the published γ, which is not available; ours, fitted on other models, is
    on another scale (L1 shrinks it, its reference level differs). A logistic fit with a bias column reproduces
    its mean label (its score equation), so the published GLM's expected preferences average to the published raw
    win rate: the two gamed baselines give two equations, solved for the offset α and the scale β > 0 (one
    baseline: α alone). Measured on the 30 shared models: α = 0.18, β = 0.55; fitting instead the 29 other models'
    published LC from their published weights (the package's weights file, not in the data) gives α = 0.19,
    β = 0.68: about the same map, from other figures."""
    from scipy.optimize import least_squares

    target = gamed.glm["win_rate"] / 100

    def residual(v):
        alpha, beta = v[0], np.exp(v[1]) if len(v) > 1 else 1.0
        return [p.mean() - target[m] for m, (*_, p) in _expected(gamed, difficulty, alpha, beta).items()]

    start = [0.0, 0.0] if len(gamed.glm) > 1 else [0.0]
    fit = least_squares(residual, start, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    if np.max(np.abs(fit.fun)) > 1e-7:
        raise ValueError("the gamed baselines' published raw win rates cannot be reproduced from their GLM "
                         f"(off by {100 * np.max(np.abs(fit.fun)):.2g} points; are the instruction difficulties "
                         "flat?)")
    return float(fit.x[0]), float(np.exp(fit.x[1])) if len(fit.x) > 1 else 1.0


def regulariser(difficulty: pd.Series, gamed: GamedBaselines) -> tuple[pd.Series, pd.DataFrame]:
    """(γ on the published scale, the gamed baselines' rebuilt rows): the rows have the columns model, index,
    model_output_chars, reference_output_chars, tanh_len, gamma and preference, the published GLM's expected
    preference (a soft label), per instruction; see the module doc."""
    alpha, beta = calibrate_difficulty(difficulty, gamed)
    rows = [rows.assign(tanh_len=tanh_len, gamma=gamma, preference=p)
            for rows, tanh_len, gamma, p in _expected(gamed, difficulty, alpha, beta).values()]
    return ((difficulty - alpha) / beta).rename(difficulty.name), pd.concat(rows, ignore_index=True)


def gamed_baseline_win_rates(gamed: GamedBaselines, difficulty: pd.Series, lam: float = LAMBDA) -> pd.DataFrame:
    """Per gamed baseline, in percent: the raw (win_rate) and LC (lc_win_rate, lc_standard_error) win rates of its
    rebuilt rows, its LC fitted as the package fits it (its own rows, not-gamed 1, plus both baselines' rows,
    weight λ/2), beside the published ones. `difficulty` as the joint fit gives it (not yet calibrated)."""
    difficulty, rows = regulariser(difficulty, gamed)
    out = {}
    for model, own in rows.groupby("model", sort=False):
        fit = fit_model(own["preference"], own["model_output_chars"], own["reference_output_chars"],
                        own["gamma"].to_numpy(), rows, lam)
        out[model] = {"win_rate": 100 * own["preference"].mean(), "lc_win_rate": 100 * fit["lc_win_rate"],
                      "lc_standard_error": 100 * fit["lc_standard_error"],
                      "published_lc": gamed.glm.loc[model, "length_controlled_winrate"],
                      "published_win_rate": gamed.glm.loc[model, "win_rate"]}
    return pd.DataFrame.from_dict(out, orient="index").rename_axis("model")


def length_gamed_version(annotations: pd.DataFrame, gamed: GamedBaselines, name: str, difficulty: pd.Series,
                         anchor: pd.DataFrame, lam: float = LAMBDA) -> pd.DataFrame:
    """One model's annotations made verbose or concise the way the published gamed baseline `name` is: a length
    game that leaves the answers' quality as it was (the gaming test, `benchmarks/alpacaeval_lc.py`).

    Lengths: each answer scaled by the ratio of `name`'s output to the reference on that instruction (what the
    verbose / concise prompt did to the baseline's answer). Preferences: shifted by the published pair's length
    effect on that instruction, s_x = w_len·tanh(Δ_x / std Δ) of `name`'s GLM (Δ: the reference's length minus
    the gamed output's; its quality and difficulty terms left out). The judge's labels are confident (mostly near
    0 or 1), so s_x moves the model's expected preference, σ(η_x) of its own regularised GLM, and each label keeps
    its residual: p' = clip(p + σ(η_x + s_x) − σ(η_x), 0, 1). `difficulty`, `anchor`: what `regulariser` gives."""
    frame = validate(annotations).sort_values("index")
    if frame["model"].nunique() != 1:
        raise ValueError("length_gamed_version takes one model's annotations")
    if name not in gamed.glm.index:
        raise ValueError(f"{name!r} is not among the gamed baselines ({', '.join(gamed.glm.index)})")
    gamma = difficulty.reindex(np.arange(len(frame))).fillna(0.0).to_numpy()     # the package's position lookup
    fit = fit_model(frame["preference"], frame["model_output_chars"], frame["reference_output_chars"], gamma,
                    anchor, lam)
    eta = fit["w_len"] * _tanh_length(frame) + fit["w_gamma"] * gamma + fit["w_model"]
    rows = gamed.lengths[gamed.lengths["model"] == name].set_index("index")
    ratio = (rows["model_output_chars"] / rows["reference_output_chars"]).reindex(frame["index"]).fillna(1.0)
    delta = rows["reference_output_chars"] - rows["model_output_chars"]
    shift = gamed.glm.loc[name, "w_len"] * np.tanh(delta / delta.std()).reindex(frame["index"]).fillna(0.0)
    chars = np.maximum(1, np.round(frame["model_output_chars"].to_numpy() * ratio.to_numpy())).astype(int)
    preference = np.clip(frame["preference"].to_numpy() + sigmoid(eta + shift.to_numpy()) - sigmoid(eta), 0.0, 1.0)
    return frame.assign(model_output_chars=chars, preference=preference).reset_index(drop=True)


def length_controlled_win_rates(annotations: pd.DataFrame, baseline: str = BASELINE,
                                difficulty: pd.Series | None = None, lam: float = LAMBDA,
                                lookup: str = "position", gamed: GamedBaselines | None = None) -> pd.Series:
    """AlpacaEval 2.0's LC win rate of every model in `annotations`, in percent (the leaderboard's unit).

    `annotations`: one row per (model, instruction) with the columns model, index, preference (∈ [0, 1], empty
    where the judge gave none), model_output_chars, reference_output_chars. The instruction difficulties are
    fitted jointly on all the models given unless `difficulty` (a Series by index) is passed; gamed baselines
    among them regularise every fit (weight `lam`), else those rebuilt from `gamed` (`read_gamed_baselines`). The
    baseline itself scores 50. `lookup`: see `win_rates`."""
    return win_rates(annotations, baseline, difficulty, lam, lookup, gamed)["lc_win_rate"].rename(
        "length_controlled_winrate")


def win_rates(annotations: pd.DataFrame, baseline: str = BASELINE, difficulty: pd.Series | None = None,
              lam: float = LAMBDA, lookup: str = "position", gamed: GamedBaselines | None = None) -> pd.DataFrame:
    """Per model, in percent: win_rate and its standard_error (the mean and s.e.m. of the preferences given),
    lc_win_rate and lc_standard_error (see `length_controlled_win_rates`), n_total, avg_length.

    `lookup`, how a model's row finds its instruction's difficulty γ in its own fit: "position" (the default) as the
    `alpaca_eval` package does, γ of the row's position among the model's annotations in instruction order
    (`_get_featurized_data` resets the index and reads γ[position]); "index", γ of the row's own instruction. They
    differ only for a model that lacks instructions: from the first missing one on, its rows take their neighbours'
    γ. The published figures carry it: gpt35_turbo_instruct lacks instruction 409, its published γ weight is 0.45
    where the others' are about 1, and its LC is within 0.41 points of the published with "position", 3.40 with
    "index" (both without the regulariser).

    `gamed`: the gamed baselines' lengths and published GLM; when the annotations hold no gamed baseline, their rows
    rebuilt from it regularise every fit and γ is put on the published scale first (`regulariser`)."""
    if lookup not in ("position", "index"):
        raise ValueError(f"lookup {lookup!r} unknown; allowed: position (the package's), index")
    frame = validate(annotations)
    if difficulty is None:
        difficulty = instruction_difficulties(frame, baseline)
    anchor = gamed_rows(frame, difficulty, baseline)
    if gamed is not None and anchor.empty:
        difficulty, anchor = regulariser(difficulty, gamed)
    out = {}
    for model, rows in frame.groupby("model", sort=True):
        prefs = rows["preference"].dropna()
        entry = {"win_rate": 100 * prefs.mean(), "standard_error": 100 * prefs.sem(), "n_total": len(prefs),
                 "avg_length": rows["model_output_chars"].mean()}
        if model == baseline:
            entry.update(lc_win_rate=50.0, lc_standard_error=0.0)
        elif prefs.empty:
            entry.update(lc_win_rate=np.nan, lc_standard_error=np.nan)
        else:
            rows = rows.sort_values("index")
            where = np.arange(len(rows)) if lookup == "position" else rows["index"]
            gamma = difficulty.reindex(where).fillna(0.0).to_numpy()
            fit = fit_model(rows["preference"], rows["model_output_chars"], rows["reference_output_chars"], gamma,
                            anchor, lam)
            entry.update(lc_win_rate=100 * fit["lc_win_rate"], lc_standard_error=100 * fit["lc_standard_error"])
        out[model] = entry
    columns = ["win_rate", "standard_error", "lc_win_rate", "lc_standard_error", "n_total", "avg_length"]
    return pd.DataFrame.from_dict(out, orient="index")[columns].rename_axis("model")


# ---- against a published leaderboard ----------------------------------------------------------------------------

def read_leaderboard(path: str | Path) -> pd.DataFrame:
    """A leaderboard CSV (AlpacaEval's, or the data folder's leaderboard.csv): by model (a `model` column or the
    first, unnamed one), its `length_controlled_winrate` and `win_rate` in percent; ValueError on bad input."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ValueError(f"leaderboard {str(path)!r} not found")
    try:
        board = pd.read_csv(path)
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, OSError, EOFError) as exc:
        raise ValueError(f"cannot read {path.name}: {type(exc).__name__}") from None
    key = "model" if "model" in board.columns else board.columns[0] if len(board.columns) else None
    need = ["length_controlled_winrate", "win_rate"]
    missing = [c for c in need if c not in board.columns]
    if key in (None, *need) or missing:
        raise ValueError(f"{path.name} lacks column(s) {', '.join(missing or ['model'])} "
                         f"(need model, {', '.join(need)})")
    board = board.set_index(board[key].astype(str))[need].apply(pd.to_numeric, errors="coerce")
    return board[~board.index.duplicated(keep="last")].rename_axis("model")


def against_published(ours: pd.DataFrame, board: pd.DataFrame) -> pd.DataFrame:
    """`win_rates`' table with the published LC and raw win rates (empty for a model not on the board) and our
    differences from them, in points."""
    published = board.reindex(ours.index)
    return ours.assign(published_lc=published["length_controlled_winrate"], published_win_rate=published["win_rate"],
                       lc_diff=ours["lc_win_rate"] - published["length_controlled_winrate"],
                       win_rate_diff=ours["win_rate"] - published["win_rate"])


def agreement(table: pd.DataFrame) -> dict:
    """Over the models with a published value (the baseline's LC, 50 by construction on both sides, counts): n,
    the mean and max |LC difference| and the worst model, the max |raw difference|."""
    lc_gap, raw_gap = table["lc_diff"].dropna().abs(), table["win_rate_diff"].dropna().abs()
    return {"n": len(lc_gap), "lc_mean": lc_gap.mean(), "lc_max": lc_gap.max(),
            "lc_worst": lc_gap.idxmax() if len(lc_gap) else None, "raw_mean": raw_gap.mean(), "raw_max": raw_gap.max()}


def evaluate(annotations: pd.DataFrame, baseline: str = BASELINE, gamed: GamedBaselines | None = None,
             board: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """What `bench alpacaeval` prints: (`win_rates` of every model, γ fitted jointly on them, regularised towards
    `gamed` when given; with `board`, `against_published` columns too; the gamed baselines' own table
    (`gamed_baseline_win_rates`) when their rows were rebuilt, else None)."""
    frame = validate(annotations)
    difficulty = instruction_difficulties(frame, baseline)
    table = win_rates(frame, baseline, difficulty, gamed=gamed)
    rebuilt = gamed is not None and gamed_rows(frame, difficulty, baseline).empty
    own = gamed_baseline_win_rates(gamed, difficulty) if rebuilt else None
    return (table if board is None else against_published(table, board)), own


# ---- annotation files -------------------------------------------------------------------------------------------

def from_alpaca_eval_records(records: list[dict]) -> pd.DataFrame:
    """The AlpacaEval repository's annotations.json rows (instruction, output_1 = the baseline's answer,
    generator_1, output_2 = the model's, generator_2, preference ∈ [1, 2] with 2 = the model wins and 0 a draw)
    in our columns; instructions are numbered in order of first appearance, so several models' files align."""
    frame = pd.DataFrame.from_records(records)
    need = ["instruction", "output_1", "output_2", "generator_2", "preference"]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ValueError(f"annotations.json rows lack field(s) {', '.join(missing)} (need {', '.join(need)})")
    preference = pd.to_numeric(frame["preference"], errors="coerce").replace({0.0: 1.5}) - 1.0  # AlpacaEval's draw: 0
    preference = preference.where((preference >= 0) & (preference <= 1))      # anything else: no preference
    return pd.DataFrame({"model": frame["generator_2"].astype(str), "index": pd.factorize(frame["instruction"])[0],
                         "preference": preference, "model_output_chars": frame["output_2"].fillna("").str.len(),
                         "reference_output_chars": frame["output_1"].fillna("").str.len()})


def read_annotations(*paths: str | Path) -> pd.DataFrame:
    """Annotations from preferences.csv(.gz) files (our columns) or AlpacaEval annotations.json files (one kind
    at a time; the .json rows of all files are numbered together); ValueError naming the file on bad input."""
    if not paths:
        raise ValueError("no annotation file given")
    kinds = {"csv" if Path(p).name.lower().endswith((".csv", ".csv.gz"))
             else "json" if Path(p).name.lower().endswith(".json")
             else None for p in paths}
    if None in kinds:
        raise ValueError("expected .csv / .csv.gz files (model, index, preference, model_output_chars, "
                         "reference_output_chars) or AlpacaEval annotations .json files")
    if len(kinds) > 1:
        raise ValueError("give .csv files or annotations .json files, not both (their instruction numbering differs)")
    frames, records = [], []
    for path in map(lambda p: Path(p).expanduser(), paths):
        if not path.is_file():
            raise ValueError(f"annotation file {str(path)!r} not found")
        try:
            if "csv" in kinds:
                frames.append(pd.read_csv(path))
            else:
                rows = json.loads(path.read_text())
                if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                    raise ValueError("an annotations.json file holds a list of objects")
                records.extend(rows)
        except (UnicodeDecodeError, json.JSONDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError,
                OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValueError(f"cannot read {path.name}: {first}") from None
    try:
        return validate(pd.concat(frames, ignore_index=True) if frames else from_alpaca_eval_records(records))
    except ValueError as exc:
        where = Path(paths[0]).name if len(paths) == 1 else f"{len(paths)} files"
        raise ValueError(f"{where}: {exc}") from None
