"""Write tests/tasks/urban/fixture_cities/ (see its README): made-up cities in the CoRE release's file layout."""

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "fixture_cities"


def city(rng: np.random.Generator, name: str, n: int) -> np.ndarray:
    root = OUT / "raw_data" / name / f"regionmap_{name}"
    root.mkdir(parents=True, exist_ok=True)
    geo = pd.DataFrame({"geo_id": np.arange(n), "type": "POLYGON", "MIX": rng.random(n).round(3),
                        "FUNCTION": rng.integers(0, 9, n), "DENSITY": rng.random(n).round(3),
                        "BLD_Count": rng.integers(0, 50, n), "Shape_Leng": rng.random(n).round(3),
                        "Shape_Area": rng.random(n).round(3), "geometry": "POLYGON EMPTY",
                        "m_lon": rng.random(n).round(4), "m_lat": rng.random(n).round(4)})
    geo.to_csv(root / f"regionmap_{name}.geo", index=False)
    rows = [(o, d, rng.random()) for o in range(n) for d in rng.choice(n, 3, replace=False)]
    rows.append((n + 5, 0, 0.5))  # an id not in .geo: the loader drops it
    mob = pd.DataFrame(rows, columns=["origin_id", "destination_id", "mobility_weight"])
    mob.insert(0, "type", "mob")
    mob.insert(0, "rel_id", np.arange(len(mob)))
    mob.to_csv(root / f"regionmap_{name}.mob", index=False)
    for ind, scale in (("population", 600.0), ("gdp", 150.0), ("co2", 150.0)):
        np.save(OUT / "raw_data" / name / f"{ind}_{name}_sum.npy", scale * rng.gamma(2.0, 0.5, n))
    return rng.standard_normal((n, 4)).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(0)
    emb = {name: city(rng, name, n) for name, n in (("bj", 12), ("xa", 10))}
    (OUT / "save_emb" / "bj-xa").mkdir(parents=True, exist_ok=True)
    for name, e in emb.items():
        np.save(OUT / "save_emb" / "bj-xa" / f"{name}_region_emb.npy", e)


if __name__ == "__main__":
    main()
