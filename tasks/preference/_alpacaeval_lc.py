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
on all rows. Regularisation towards gamed baselines (the package's λ = 0.2): the annotations of the baseline
prompted to be verbose and concise (`<baseline>_verbose`, `<baseline>_concise`, not-gamed indicator 0) join
every model's fit with weight λ/2 per row, so the length and difficulty weights that explain them (the same
quality as the baseline, a different length) anchor m's. They are used when they are among the annotations
given; the published annotations of the 30 models we test on do not include them, and their LC is then the
package's `length_controlled_noreg` variant of the same GLM (see `difficulties` for the other deviation).

Instruction difficulty γ (`instruction_difficulties`). The package downloads γ from the hub
(`instruction_difficulty.csv` of tatsu-lab/alpaca_eval); it is not available offline, so we estimate it the
way its authors did (their notebook `notebooks/instruction_difficulty.ipynb`): one joint fit of all the given
models' annotations (rows without a preference or with an empty output dropped), formula
`C(model):tanh(Δ/std_m) + C(model) + C(index) + not_gamed − 1` (a bias and a length slope per model, one
dummy per instruction with instruction 0 as the reference level, so γ_0 = 0), with the same L1 / CV fit; γ_x
is instruction x's dummy weight. The published γ was fitted this way on the leaderboard of early 2024 (more
models, including the gamed baselines); ours on the models given, so it differs by the model set — the
notebook reports that γ fitted on different model sets correlate highly and that the LC is insensitive to it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

BASELINE = "gpt4_1106_preview"          # AlpacaEval 2.0's reference model (the judge compares each model with it)
LAMBDA = 0.2                            # regularize_to_baseline_lambda of length_controlled_v1
COLUMNS = ("model", "index", "preference", "model_output_chars", "reference_output_chars")


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


def soft_logistic_l1_cv(X, y, sample_weight=None, n_splits: int = 5, n_cs: int = 10) -> tuple[np.ndarray, float]:
    """(coefficients, chosen C) of alpaca_eval's fit_LogisticRegressionCV(is_ytrue_proba=True): see the module doc.

    X: (n, d) dense or scipy sparse; y: (n,) soft labels in [0, 1]; sample_weight: (n,) or None."""
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

    cs = np.logspace(-4, 4, n_cs)
    if n_splits <= 0:
        return fit(np.arange(2 * n), 100.0).coef_[0], 100.0    # the package's n_splits = 0 branch (C = 100)
    loss = np.zeros(len(cs))
    for train, test in GroupKFold(n_splits).split(X2, label, groups):
        target = np.where(label[test] == 1, prob[test], 1.0 - prob[test])    # both copies: the soft label p
        for k, C in enumerate(cs):
            q = np.clip(fit(train, C).predict_proba(X2[test])[:, 1], 1e-15, 1 - 1e-15)
            loss[k] += -np.mean((target * np.log(q) + (1 - target) * np.log(1 - q)) * weight[test])
    best = float(cs[np.argmin(loss)])                          # sklearn: argmax of the summed scores, first on ties
    return fit(np.arange(2 * n), best).coef_[0], best


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


def instruction_difficulties(annotations: pd.DataFrame, baseline: str = BASELINE) -> pd.Series:
    """γ_x per instruction index, from the joint fit of all the models given (see the module doc)."""
    design, preference, models, levels = joint_design(annotations, baseline)
    coef, _ = soft_logistic_l1_cv(design, preference)
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


def length_controlled_win_rates(annotations: pd.DataFrame, baseline: str = BASELINE,
                                difficulty: pd.Series | None = None, lam: float = LAMBDA,
                                lookup: str = "position") -> pd.Series:
    """AlpacaEval 2.0's LC win rate of every model in `annotations`, in percent (the leaderboard's unit).

    `annotations`: one row per (model, instruction) with the columns model, index, preference (∈ [0, 1], empty
    where the judge gave none), model_output_chars, reference_output_chars. The instruction difficulties are
    fitted jointly on all the models given unless `difficulty` (a Series by index) is passed; gamed baselines
    among them regularise every fit (weight `lam`). The baseline itself scores 50. `lookup`: see `win_rates`."""
    return win_rates(annotations, baseline, difficulty, lam, lookup)["lc_win_rate"].rename("length_controlled_winrate")


def win_rates(annotations: pd.DataFrame, baseline: str = BASELINE, difficulty: pd.Series | None = None,
              lam: float = LAMBDA, lookup: str = "position") -> pd.DataFrame:
    """Per model, in percent: win_rate and its standard_error (the mean and s.e.m. of the preferences given),
    lc_win_rate and lc_standard_error (see `length_controlled_win_rates`), n_total, avg_length.

    `lookup`, how a model's row finds its instruction's difficulty γ in its own fit: "position" (the default) as the
    `alpaca_eval` package does, γ of the row's position among the model's annotations in instruction order
    (`_get_featurized_data` resets the index and reads γ[position]); "index", γ of the row's own instruction. They
    differ only for a model that lacks instructions: from the first missing one on, its rows take their neighbours'
    γ. The published figures carry it: gpt35_turbo_instruct lacks instruction 409, its published γ weight is 0.45
    where the others' are about 1, and its LC is within 0.64 points of the published with "position", 2.92 with
    "index"."""
    if lookup not in ("position", "index"):
        raise ValueError(f"lookup {lookup!r} unknown; allowed: position (the package's), index")
    frame = validate(annotations)
    if difficulty is None:
        difficulty = instruction_difficulties(frame, baseline)
    gamed = gamed_rows(frame, difficulty, baseline)
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
                            gamed, lam)
            entry.update(lc_win_rate=100 * fit["lc_win_rate"], lc_standard_error=100 * fit["lc_standard_error"])
        out[model] = entry
    columns = ["win_rate", "standard_error", "lc_win_rate", "lc_standard_error", "n_total", "avg_length"]
    return pd.DataFrame.from_dict(out, orient="index")[columns].rename_axis("model")


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
