"""Reader of the authors' released city data (AIMUrban/CoRE `raw_data/<city>/`), as `data/get_dataset.py` reads it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tasks.urban import INDICATORS, City

NON_FEATURES = {"geo_id", "m_lon", "m_lat", "Shape_Leng", "Shape_Area"}  # identifiers and geometry, not attributes


def city_files(data_dir: str, city: str) -> dict[str, Path]:
    root = Path(data_dir).expanduser() / city
    files = {"geo": root / f"regionmap_{city}" / f"regionmap_{city}.geo",
             "mob": root / f"regionmap_{city}" / f"regionmap_{city}.mob",
             "od": root / f"region_od_flow_{city}_11.npy"}
    files.update({ind: root / f"{ind}_{city}_sum.npy" for ind in INDICATORS})
    return files


def mobility_weights(files: dict[str, Path]) -> tuple[pd.DataFrame, np.ndarray]:
    """The .geo table and the (n, n) mobility weights of the .mob file, in .geo's region order."""
    geo = pd.read_csv(files["geo"])
    index = {gid: i for i, gid in enumerate(geo["geo_id"])}
    weights = np.zeros((len(index), len(index)))
    mob = pd.read_csv(files["mob"])[["origin_id", "destination_id", "mobility_weight"]]
    for origin, dest, weight in mob.itertuples(index=False):
        if origin in index and dest in index:  # get_dataset.py skips ids not in .geo
            weights[index[origin], index[dest]] = weight
    return geo, weights


def load_city(data_dir: str, city: str) -> City:
    """One city: regions in `.geo` order, `.mob` edge weights, the OD matrix, the three indicator files."""
    files = city_files(data_dir, city)
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise ValueError(f"data_dir {data_dir!r}, city {city!r}: missing {', '.join(missing)}; expected the released "
                         "AIMUrban/CoRE raw_data layout <data_dir>/<city>/regionmap_<city>/regionmap_<city>.{geo,mob}, "
                         "<data_dir>/<city>/region_od_flow_<city>_11.npy and {population,gdp,co2}_<city>_sum.npy")
    geo, graph = mobility_weights(files)
    n = len(graph)  # the regions of .geo (its distinct ids)
    np.fill_diagonal(graph, 0.0)  # GATConv removes self loops and adds its own (the encoder's job)
    od = np.asarray(np.load(files["od"]), float)
    labels = np.stack([np.asarray(np.load(files[ind]), float).reshape(-1) for ind in INDICATORS], axis=1)
    if od.shape != (n, n) or len(labels) != n:
        raise ValueError(f"city {city!r}: .geo has {n} regions but the OD matrix is {od.shape} and the labels "
                         f"have {len(labels)} rows")
    columns = [c for c in geo.select_dtypes("number").columns if c not in NON_FEATURES]
    return City(od=od, graph=graph, features=geo[columns].to_numpy(float), labels=labels)
