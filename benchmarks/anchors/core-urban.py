"""The authors' released CoRE embeddings scored by our evaluator and by theirs, on the three real cities.

Usage: .venv/bin/python benchmarks/anchors/core-urban.py --authors /tmp/CoRE --data ../shared/data/urban

--data: the cities and the released embeddings in the layout of AIMUrban/CoRE (raw_data/, save_emb/), read by the
task urban_cities (`--set task.data=PATH`). --authors: a work tree of AIMUrban/CoRE (only
evaluator/evaluator_cross_city.py is read: its `evaluation_reg` and `metrics_local`, sklearn's Ridge(alpha=1.0),
run as released). Ours: tasks.urban.ridge_transfer and the family's judge tasks.urban.score.
For each released pair (bj-xa, cd-bj, cd-xa) in both directions, each indicator: MAE, RMSE, MAPE ours and theirs;
then the source-city mean predictor (a floor any embedding must beat) by our judge.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.anchors._authors import definitions, source  # noqa: E402
from tasks.urban import INDICATORS, TwoCityProblem, TwoCityResult, ridge_transfer, score  # noqa: E402
from tasks.urban.urban_cities import RELEASED_PAIRS, load_city, released_embeddings  # noqa: E402

METRICS = ("mae", "rmse", "mape")


def directions() -> list[tuple[str, str]]:
    return [d for a, b in RELEASED_PAIRS for d in ((a, b), (b, a))]


def ours(data: str, src: str, tgt: str, cities: dict) -> dict[str, float]:
    problem = TwoCityProblem(source=cities[src], target=cities[tgt], names=(src, tgt))
    es, et = released_embeddings(data, src, tgt)
    return score(problem, TwoCityResult(predictions=ridge_transfer(es, cities[src].labels, et)))


def source_mean(src: str, tgt: str, cities: dict) -> dict[str, float]:
    problem = TwoCityProblem(source=cities[src], target=cities[tgt], names=(src, tgt))
    pred = np.repeat(cities[src].labels.mean(0, keepdims=True), cities[tgt].n, axis=0)
    return score(problem, TwoCityResult(predictions=pred))


def theirs(authors: str, data: str, src: str, tgt: str, cities: dict) -> dict[str, float]:
    from sklearn import linear_model
    from sklearn.metrics import mean_absolute_error, mean_squared_error
    ns = {"np": np, "linear_model": linear_model, "mean_absolute_error": mean_absolute_error,
          "mean_squared_error": mean_squared_error}
    text = source(authors, "evaluator/evaluator_cross_city.py")
    evaluation_reg = definitions(text, ["MAPE", "metrics_local", "evaluation_reg"], ns).evaluation_reg
    es, et = released_embeddings(data, src, tgt)
    out = {}
    for k, ind in enumerate(INDICATORS):  # their evaluator loads the labels as float32
        ys, yt = (cities[c].labels[:, k].astype("float32") for c in (src, tgt))
        values = evaluation_reg(es.astype("float32"), ys, et.astype("float32"), yt)
        out.update({f"{m}_{ind}": float(v) for m, v in zip(METRICS, values, strict=True)})
    return out


def main() -> None:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", required=True, help="a work tree of AIMUrban/CoRE (evaluator/)")
    parser.add_argument("--data", required=True, help="folder with raw_data/ and save_emb/ (the release's layout)")
    args = parser.parse_args()
    cities = {c: load_city(args.data, c) for c in ("bj", "cd", "xa")}
    worst = 0.0
    for src, tgt in directions():
        o, t, m = ours(args.data, src, tgt, cities), theirs(args.authors, args.data, src, tgt, cities), \
            source_mean(src, tgt, cities)
        for ind in ("gdp", "population", "co2"):
            cells = []
            for metric in METRICS:
                key = f"{metric}_{ind}"
                worst = max(worst, abs(o[key] - t[key]) / max(abs(t[key]), 1e-12))
                cells.append(f"{metric.upper()} {o[key]:9.3f} / {t[key]:9.3f}")
            print(f"{src}->{tgt} {ind:10s} ours / theirs: {'   '.join(cells)}   source mean MAE {m[f'mae_{ind}']:9.3f}")
    print(f"largest relative difference ours vs theirs: {worst:.2e} (theirs in float32, ours in float64)")


if __name__ == "__main__":
    main()
