"""GENE's runtime against PC and NOTEARS-MLP at d = 10 and d = 20 (prints; asserts nothing).

    .venv/bin/python benchmarks/causal_runtime.py            # the paper's n = 3000, full method defaults
    .venv/bin/python benchmarks/causal_runtime.py --quick    # n = 300, GENE 100 epochs, NOTEARS ≤ 200 L-BFGS steps

The paper (§5.1, Fig. 8) places GENE on the Pareto front of F1 against time; this prints each method's
solve time (`runtime_s`, data generation excluded), F1 and the ratios GENE / PC and GENE / NOTEARS-MLP on
one ER graph with the MLP SEM and density 2 per size. `--threads` sets torch's intra-op threads.
"""

from __future__ import annotations

import argparse
import time

import torch

from bench.context import RunContext
from methods.causal import gene, notears_mlp, pc
from tasks.causal import anm_synthetic, score


def measure(d: int, n: int, quick: bool, seed: int) -> dict[str, tuple[float, float]]:
    problem = anm_synthetic.build(anm_synthetic.Config(d=d, density=2, n=n, sem="mlp"), RunContext(seed).for_task())
    runs = {
        "gene": (gene, gene.Config(epochs=100) if quick else gene.Config()),
        "pc": (pc, pc.Config()),
        "notears_mlp": (notears_mlp, notears_mlp.Config(max_inner=200) if quick else notears_mlp.Config()),
    }
    out = {}
    for name, (module, config) in runs.items():
        start = time.perf_counter()
        result = module.solve(problem, config, RunContext(seed))
        wall = time.perf_counter() - start
        out[name] = (wall, score(problem, result)["f1"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 300 and shortened training (minutes, not hours)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: leave torch's default)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    n = 300 if args.quick else 3000
    print(f"n = {n}, quick = {args.quick}, torch threads = {torch.get_num_threads()}")
    print(f"{'d':>3} {'method':<12} {'seconds':>9} {'F1':>6}")
    for d in args.sizes:
        times = measure(d, n, args.quick, args.seed)
        for name, (wall, f1) in times.items():
            print(f"{d:>3} {name:<12} {wall:>9.2f} {f1:>6.2f}")
        print(f"{d:>3} ratio GENE/PC = {times['gene'][0] / times['pc'][0]:.1f}, "
              f"GENE/NOTEARS-MLP = {times['gene'][0] / times['notears_mlp'][0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
