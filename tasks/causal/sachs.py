"""Sachs et al. (2005) protein-signalling data: 853 observational cells, 11 proteins (GENE Table 1).

Paper: Li et al., ICML 2025, §5.2, Table 1; code ECNU-ILOG/GENE `Datagenerator.py`: the first 853
rows of cdt's `load_dataset("sachs")` (the cd3cd28 condition of the 7466-row flow-cytometry set),
raw (not standardised), against the 16-edge ground truth the code hard-codes (the paper's text says
17 edges; cdt's own target has 18 with some directions differing; GENE's list matches Table 1).

The CSV ships inside the cdt 0.6.0 wheel (`cdt/data/resources/cyto_full_data.csv`); it is located
without importing cdt. `path` points at another copy (a CSV with the 11 named columns).

Fidelity: faithful (same rows, same ground truth as the authors' code).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bench.context import RunContext
from bench.errors import BenchError
from bench.registry import task
from tasks.causal import CausalProblem, _sem

NAMES = ("praf", "pmek", "plcg", "PIP2", "PIP3", "p44/42", "pakts473", "PKA", "PKC", "P38", "pjnk")
EDGES = (("PKC", "praf"), ("PKC", "pmek"), ("PKC", "pjnk"), ("PKC", "P38"), ("PKC", "PKA"),
         ("PKA", "praf"), ("PKA", "p44/42"), ("PKA", "pjnk"), ("PKA", "P38"), ("PKA", "pakts473"),
         ("praf", "pmek"), ("pmek", "p44/42"), ("plcg", "PIP2"), ("plcg", "PIP3"), ("PIP3", "PIP2"),
         ("p44/42", "pakts473"))
CDT_FILE = "cdt/data/resources/cyto_full_data.csv"
TOTAL_ROWS = 7466

# the smallest instance, for the conformance suite (tests/test_conformance.py)
SMALLEST = {"n_samples": 100}


@dataclass(frozen=True)
class Config:
    n_samples: int = 853        # first rows used (paper: 853, the observational condition)
    standardize: bool = False   # scale every column to mean 0, std 1 (the paper uses raw data)
    path: str | None = None     # a CSV with the 11 columns; None: the copy inside the cdt wheel

    def __post_init__(self) -> None:
        if not 10 <= self.n_samples <= TOTAL_ROWS:
            raise ValueError(f"n_samples must lie in [10, {TOTAL_ROWS}], got {self.n_samples}")


def data_path(path: str | None) -> Path:
    """The CSV to read: `path`, or the file inside the installed cdt distribution."""
    if path is not None:
        found = Path(path).expanduser()
        if not found.is_file():
            raise BenchError(f"Sachs data: no file at {found}; pass path= to a CSV with columns {', '.join(NAMES)}")
        return found
    try:
        found = Path(importlib.metadata.distribution("cdt").locate_file(CDT_FILE))
    except importlib.metadata.PackageNotFoundError:
        found = None
    if found is None or not found.is_file():
        raise BenchError("Sachs data not found: install cdt 0.6.0 (`pip install cdt==0.6.0`; its wheel ships "
                         f"{CDT_FILE}) or pass path= to a CSV of the Sachs et al. (2005) data with columns "
                         f"{', '.join(NAMES)}")
    return found


def true_adjacency() -> np.ndarray:
    adj = np.zeros((len(NAMES), len(NAMES)), dtype=int)
    for cause, effect in EDGES:
        adj[NAMES.index(cause), NAMES.index(effect)] = 1
    return adj


@task(family="causal", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> CausalProblem:
    """Deterministic: the first n_samples rows; ctx is unused."""
    path = data_path(config.path)
    frame = pd.read_csv(path)
    missing = [name for name in NAMES if name not in frame.columns]
    if missing:
        raise BenchError(f"Sachs data at {path} lacks columns {', '.join(missing)}; expected {', '.join(NAMES)}")
    if len(frame) < config.n_samples:
        raise BenchError(f"Sachs data at {path} has {len(frame)} rows; n_samples={config.n_samples} asked")
    data = frame.loc[: config.n_samples - 1, list(NAMES)].to_numpy(dtype=float)
    if config.standardize:
        data = _sem.standardize(data)
    return CausalProblem(data=data, adjacency=true_adjacency(), names=NAMES, standardized=config.standardize)
