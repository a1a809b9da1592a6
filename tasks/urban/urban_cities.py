"""The three real cities of CoRE's release (Beijing, Chengdu, Xi'an): one source → target pair, read from `task.data`.

Chen et al., "Cross-City Latent Space Alignment for Consistency Region Embedding" (CoRE), ICML 2025 (code
AIMUrban/CoRE; docs/papers/core-urban.md). `--set task.data=PATH` names a folder in the layout of the authors'
repository: `PATH/raw_data/<city>/...` (PATH may also be the `raw_data` folder itself), with

    raw_data/<city>/regionmap_<city>/regionmap_<city>.geo   CSV: geo_id, land-use attributes MIX … FORM_TYPE, polygon
    raw_data/<city>/regionmap_<city>/regionmap_<city>.mob   CSV: origin_id, destination_id, mobility_weight
    raw_data/<city>/{population,gdp,co2}_<city>_sum.npy     (n,) indicators in .geo order
    raw_data/<city>/region_od_flow_<city>_11.npy            (n, n) OD flows (optional, see below)
    save_emb/<source>-<target>/<city>_region_emb.npy        the authors' aligned embeddings (optional; see
                                                            `released_embeddings`)

The project ships none of it. `task.data` left empty finds the data where this machine keeps it: $BENCH_URBAN_DATA,
else `shared/data/urban` in the folder that holds the repository (where this platform's machines keep the data),
else ~/.cache/icml2025-bench/urban. Like the cache root, where a machine keeps its data is no part of a run's key. A
machine without it cannot build the task: `unavailable` says so, and planners (`bench reproduce`, the verdict lock's
test) leave its cells out with that reason.

Regions follow `.geo` order and `.mob` edges whose ids are not in `.geo` are dropped, as the release's
`data/get_dataset.py` reads them. The graph is the `.mob` weights without self loops (the encoder adds its own).
L_mob's flows M are the OD file when present (the release divides it by its sum); where the OD file is absent (the
copies available offline: it is too large to store), M is the `.mob` weights, self loops included: the same origin →
destination pairs, at the `.mob` file's (row-normalised) weights.

Pairs the authors released embeddings for: bj→xa, cd→bj, cd→xa (any ordered pair of the three cities builds); for
these the problem carries the authors' embeddings (`TwoCityProblem.released`, read by the reference method
`released_core`).
Scored by the family's judge (tasks/urban/__init__.py): MAE, RMSE, R², MAPE per indicator (population, GDP, CO2)
and their means, on the target city after a ridge readout fitted on the source city.

Fidelity: the authors' data, read as their loader reads it; the OD fallback above is ours.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.urban import INDICATORS, City, TwoCityProblem
from tasks.urban._released import NON_FEATURES, mobility_weights  # NON_FEATURES: ids and geometry

CITIES = ("bj", "cd", "xa")
RELEASED_PAIRS = (("bj", "xa"), ("cd", "bj"), ("cd", "xa"))   # the directories of the release's save_emb/
ROOT = Path(__file__).resolve().parents[2]
# the conformance suite's instance: a 12- and 10-region stand-in in the release's layout (not the authors' data)
SMALLEST = {"data": "tests/tasks/urban/fixture_cities", "source": "bj", "target": "xa"}


@dataclass(frozen=True)
class Config:
    data: str = ""          # folder holding raw_data/<city>/ (the release's layout; never shipped): "" = found_data()
    source: str = "bj"      # source city: labels available to methods (released pairs: bj→xa, cd→bj, cd→xa)
    target: str = "xa"      # target city: labels for scoring only

    def __post_init__(self) -> None:
        for name, city in (("source", self.source), ("target", self.target)):
            if city not in CITIES:
                raise ValueError(f"{name} {city!r} unknown; allowed: {', '.join(CITIES)}")
        if self.source == self.target:
            raise ValueError(f"source and target must differ, both are {self.source!r}")


def data_places() -> list[Path]:
    """Where an empty `task.data` looks, in order: $BENCH_URBAN_DATA, shared/data/urban in the folder holding the
    repository, ~/.cache/icml2025-bench/urban."""
    env = os.environ.get("BENCH_URBAN_DATA")
    return ([Path(env).expanduser()] if env else []) + [ROOT.parent / "shared" / "data" / "urban",
                                                        Path("~/.cache/icml2025-bench/urban").expanduser()]


def raw_dir(data: str) -> Path:
    """PATH/raw_data, or PATH itself when it already is the raw_data folder; relative paths also from the repo; an
    empty PATH: the first of `data_places()` that holds the cities."""
    if not data:
        for place in data_places():
            if (place / "raw_data").is_dir():
                return place / "raw_data"
        raise ValueError("the released cities are not on this machine (the CoRE release's raw_data/<city>/ layout, "
                         f"AIMUrban/CoRE): looked in {', '.join(map(str, data_places()))}; give --set task.data=PATH "
                         "or set BENCH_URBAN_DATA")
    path = Path(data).expanduser()
    for base in ([path] if path.is_absolute() else [path, ROOT / path]):
        if (base / "raw_data").is_dir():
            return base / "raw_data"
        if any((base / c).is_dir() for c in CITIES):
            return base
    raise ValueError(f"task.data {data!r}: no raw_data/<city>/ folder (cities {', '.join(CITIES)}) found there")


def unavailable(config: Config) -> str | None:
    """Why this machine cannot build `config`: the cities are not where it looks (None when they are)."""
    try:
        raw_dir(config.data)
    except ValueError as exc:
        return str(exc)
    return None


def _files(raw: Path, city: str) -> dict[str, Path]:
    root = raw / city
    files = {"geo": root / f"regionmap_{city}" / f"regionmap_{city}.geo",
             "mob": root / f"regionmap_{city}" / f"regionmap_{city}.mob"}
    files.update({ind: root / f"{ind}_{city}_sum.npy" for ind in INDICATORS})
    return files


def load_city(data: str, city: str) -> City:
    raw = raw_dir(data)
    files = _files(raw, city)
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise ValueError(f"task.data {data!r}, city {city!r}: missing {', '.join(missing)}")
    geo, weights = mobility_weights(files)
    n = len(weights)  # the regions of .geo (its distinct ids)
    od_file = raw / city / f"region_od_flow_{city}_11.npy"
    od = np.asarray(np.load(od_file), float) if od_file.is_file() else weights.copy()
    graph = weights.copy()
    np.fill_diagonal(graph, 0.0)
    labels = np.stack([np.asarray(np.load(files[ind]), float).reshape(-1) for ind in INDICATORS], axis=1)
    if od.shape != (n, n) or len(labels) != n:
        raise ValueError(f"city {city!r}: .geo has {n} regions but the OD matrix is {od.shape} and the labels have "
                         f"{len(labels)} rows")
    columns = [c for c in geo.select_dtypes("number").columns if c not in NON_FEATURES]
    return City(od=od, graph=graph, features=geo[columns].to_numpy(float), labels=labels)


def released_embeddings(data: str, source: str, target: str) -> tuple[np.ndarray, np.ndarray]:
    """The authors' aligned embeddings (source, target) from PATH/save_emb/<a>-<b>/ for the pair in either direction.

    Their evaluator (evaluator/evaluator_cross_city.py) fits Ridge(alpha=1.0) on the source city's embeddings and
    one indicator, predicts the target city's, clips negatives to 0 and reports MAE, RMSE, MAPE: the family's
    `ridge_transfer` and `score` (tests/tasks/urban/test_urban_cities.py checks them against recorded numbers)."""
    base = raw_dir(data).parent
    for a, b in ((source, target), (target, source)):
        folder = base / "save_emb" / f"{a}-{b}"
        if folder.is_dir():
            return tuple(np.load(folder / f"{c}_region_emb.npy").astype(float) for c in (source, target))
    raise ValueError(f"task.data {data!r}: no save_emb/{source}-{target} or save_emb/{target}-{source} folder; the "
                     f"release has {', '.join(f'{a}-{b}' for a, b in RELEASED_PAIRS)}")


def _released_or_none(data: str, source: str, target: str) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        return released_embeddings(data, source, target)
    except ValueError:  # the release has no embeddings for this pair
        return None


@task(family="urban", config=Config, version=1, smallest=SMALLEST, unavailable=unavailable)
def build(config: Config, ctx: RunContext) -> TwoCityProblem:
    return TwoCityProblem(source=load_city(config.data, config.source), target=load_city(config.data, config.target),
                          names=(config.source, config.target),
                          released=_released_or_none(config.data, config.source, config.target))
