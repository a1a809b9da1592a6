"""A paper's CPU-scale verdicts as filed and with one method setting changed, on the same runs: the per-cell means
with their paired difference, and both verdicts of every claim (prints; asserts nothing).

    .venv/bin/python benchmarks/variant_verdicts.py PAPER DB_URL METHOD[,METHOD...] KEY=VALUE

Every cell of the paper's CPU-scale claims, their negative controls and switched-off runs, at the claims' seeds, is
run twice into DB_URL (resuming): as filed, and with KEY=VALUE added to the method config of each cell of the named
methods; one thread per cell, as the verdict locks run. Then, per claim and cell group, the metric's mean ± 95 % t
half-width over the seeds under both settings and the paired per-seed difference (variant − filed), and the claim's
verdict under each. docs/papers/logo.md (the released negative weighting) and
docs/papers/label-smoothing-calibration.md (the sum reduction) were measured with it.
"""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import bench  # noqa: E402, F401  (pins the float numerics, as bench reproduce)
from bench.registry import Registry  # noqa: E402
from bench.store import Store  # noqa: E402
from leaderboard.claims import CPU_SCALES, evaluate_paper, group_cells, load_paper, paper_cells  # noqa: E402
from runners.local import run_cells  # noqa: E402

slug, url, methods, (key, value) = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4].split("=", 1)
reg, store = Registry.discover(), Store.open(url)
filed = load_paper(reg, slug)
filed = replace(filed, claims=[c for c in filed.claims if c.scale in CPU_SCALES])
over = lambda g: replace(g, method_config={**g.method_config, key: value}) if g.method in methods else g  # noqa
variant = replace(filed, claims=[replace(c, groups=tuple(map(over, c.groups)), control=tuple(map(over, c.control)))
                                 for c in filed.claims])
cells = list(dict.fromkeys(paper_cells(filed, reg) + paper_cells(variant, reg)))
run_cells(sorted(cells, key=lambda c: c.run_key), store, reg, threads=1)   # as the verdict locks: one thread


def per_seed(g, metric, seeds):
    keys = [c.run_key for c in group_cells(g, reg, seeds, check=True)]
    return np.array([store.metrics(keys)[k][metric] for k in keys])


def ci(x):
    return f"{x.mean():.4f} ± {stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / len(x) ** 0.5:.4f}"


for c, v in zip(filed.claims, variant.claims, strict=True):
    for g, h in zip((*c.groups, *c.control), (*v.groups, *v.control), strict=True):
        a, b = per_seed(g, c.metric, c.seeds), per_seed(h, c.metric, c.seeds)
        print(f"| {c.id} | {c.metric} | {g.label()} | {ci(a)} | {ci(b)} | {ci(b - a)} |")
for a, b in zip(evaluate_paper(filed, store, reg), evaluate_paper(variant, store, reg), strict=True):
    print(f"| {a.claim.id} | {a.verdict} | {b.verdict} |")
    print(f"  as filed: {a.detail[:400]}\n  {key}={value}: {b.detail[:400]}")
