"""GENE as released (ECNU-ILOG/GENE, `GENE.py`) beside ours, on the same generated graphs.

Usage: .venv/bin/python benchmarks/anchors/gene-causal.py --authors /tmp/GENE [--graphs 3] [--d 10] [--n 3000]

Data: our task anm_synthetic (ER DAG with d·2 edges, MIM mechanism, n = 3000, noise 1; graph k = task seed k).
Theirs: `GENE(train_data=data, test_data=data)` imported from their GENE.py (what their run.py calls after
generating the data; run.py itself needs gcastle and cdt only for the generator and the metric, which our task
and our scorer replace here), with numpy's and torch's global seeds set to k (their code draws its start order
from np.random and its per-input-size template MLPs from torch's global generator).
Ours: `gene_forward` (the released rule: forward parent_search, θ = 0.02) with penalty_offset 0 (the code's
α·R²/i) and with our default penalty_offset 1 (Eq. 6), and `gene` (the paper's least pruning), seed k.
Printed first, in a second: their nested `chisquare_test` and `move` (GENE.py l.27-30, l.98-108) beside ours
(`_gene_common.chi2_pvalues`, `move`) on the same inputs. Then, per graph and method: F1, SHD and the number of
true edges the found order reverses, then ours − theirs. Their fits are single-threaded torch; one graph takes
several CPU minutes (`--graphs 0` runs the quick part only).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.context import RunContext  # noqa: E402
from benchmarks.anchors._authors import definitions, parser, row, source  # noqa: E402  # noqa: E402
from methods.causal import _gene_common, gene, gene_forward  # noqa: E402
from tasks.causal import CausalResult, anm_synthetic, score  # noqa: E402


def their_gene(authors: str):
    path = Path(authors).expanduser() / "GENE.py"
    if not path.is_file():
        raise SystemExit(f"--authors {authors}: GENE.py not found; pass a work tree of ECNU-ILOG/GENE")
    spec = importlib.util.spec_from_file_location("authors_gene", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GENE


def quick_inputs(seed: int, n: int = 3000, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """(n, k) inputs and an (n,) residual: half of the columns independent of it, half not."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k))
    resid = rng.standard_normal(n) + np.where(np.arange(k) % 2 == 0, 0.0, 0.3) @ np.tanh(x).T
    return x, resid


def quick(authors: str, seed: int) -> dict[str, object]:
    """Their χ² p-values and OP_ij results against ours, on the same inputs."""
    import scipy.stats
    their = definitions(source(authors, "GENE.py"), ["GENE.chisquare_test", "GENE.move"],
                        {"np": np, "chi2_contingency": scipy.stats.chi2_contingency})
    x, resid = quick_inputs(seed)
    theirs_p = [float(their.chisquare_test(x[:, c], resid, bin_num=10)) for c in range(x.shape[1])]
    ours_p = [float(p) for p in _gene_common.chi2_pvalues(x, resid, 10)]
    order = np.random.default_rng(seed).permutation(10)
    moves = sum(list(their.move(order, i, j)) == _gene_common.move(list(order), i, j)
                for i in range(10) for j in range(10) if i != j)
    return {"theirs_p": theirs_p, "ours_p": ours_p, "moves_equal": moves}


def reversed_edges(adjacency: np.ndarray, order) -> int:
    """True edges i → j with j before i in the order (errors no parent rule can undo)."""
    pos = {int(v): p for p, v in enumerate(order)}
    return int(sum(pos[i] > pos[j] for i, j in zip(*np.nonzero(adjacency), strict=True)))


def summary(problem, result: CausalResult) -> dict[str, float]:
    s = score(problem, result)
    return {"f1": s["f1"], "shd": s["shd"], "reversed": reversed_edges(problem.adjacency, result.order),
            "seconds": result.runtime_s}


def run(authors: str, seed: int, d: int, n: int) -> dict[str, dict[str, float]]:
    problem = anm_synthetic.build(anm_synthetic.Config(d=d, n=n), RunContext(seed).for_task())
    np.random.seed(seed)
    torch.manual_seed(seed)
    start = time.perf_counter()
    order, adj, _ = their_gene(authors)(train_data=problem.data, test_data=problem.data)
    out = {"theirs": summary(problem, CausalResult(adjacency=np.asarray(adj), order=np.asarray(order),
                                                   runtime_s=time.perf_counter() - start))}
    code = replace(gene_forward.Config(), penalty_offset=0)
    for name, module, config in (("ours_forward_offset0", gene_forward, code),
                                 ("ours_forward_offset1", gene_forward, gene_forward.Config()),
                                 ("ours_gene_pruning", gene, gene.Config())):
        out[name] = summary(problem, module.solve(problem, config, RunContext(seed)))
    return out


def main() -> None:
    args = parser(__doc__.splitlines()[0])
    args.add_argument("--graphs", type=int, default=3)
    args.add_argument("--d", type=int, default=10)
    args.add_argument("--n", type=int, default=3000)
    args = args.parse_args()
    torch.set_num_threads(1)
    for seed in range(3):
        q = quick(args.authors, seed)
        print(f"chi2 p-values, seed {seed}: ours {[round(p, 6) for p in q['ours_p']]} theirs "
              f"{[round(p, 6) for p in q['theirs_p']]}; OP_ij moves equal: {q['moves_equal']}/90")
    if args.graphs == 0:
        return
    runs = []
    for seed in range(args.graphs):
        runs.append(run(args.authors, seed, args.d, args.n))
        print(f"graph {seed}:", {m: {k: round(v, 3) for k, v in r.items()} for m, r in runs[-1].items()}, flush=True)
    print(f"GENE, {args.graphs} graphs, d {args.d}, n {args.n}, ER density 2, MIM")
    for name in ("ours_forward_offset0", "ours_forward_offset1", "ours_gene_pruning"):
        for metric in ("f1", "shd", "reversed"):
            print(row(f"{metric}: {name} vs theirs", [r[name][metric] for r in runs],
                      [r["theirs"][metric] for r in runs]))


if __name__ == "__main__":
    main()
