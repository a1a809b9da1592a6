"""CoRE's cost and transfer quality on the synthetic two-city task; prints seconds, the alignment overhead ratio and
MAE.

Usage: .venv/bin/python benchmarks/urban_core.py [--epochs 100] [--seeds 1]
The alignment losses' overhead is the ratio of CoRE's time to the L_mob-only encoders' (direct_transfer) at equal
epochs.
"""

import argparse
import time

from bench.context import RunContext
from methods.urban import core, direct_transfer, procrustes, source_mean
from tasks.urban import score, two_city


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    methods = {"source_mean": (source_mean, source_mean.Config()),
               "direct_transfer": (direct_transfer, direct_transfer.Config(epochs=args.epochs)),
               "procrustes": (procrustes, procrustes.Config(epochs=args.epochs)),
               "core": (core, core.Config(epochs=args.epochs))}
    seconds = {name: 0.0 for name in methods}
    mae = {name: 0.0 for name in methods}
    for seed in range(args.seeds):
        problem = two_city.build(two_city.Config(), RunContext(seed).for_task())
        for name, (module, config) in methods.items():
            start = time.perf_counter()
            result = module.solve(problem, config, RunContext(seed))
            seconds[name] += (time.perf_counter() - start) / args.seeds
            mae[name] += score(problem, result)["mae"] / args.seeds
    for name in methods:
        print(f"{name:16s} {seconds[name]:7.2f} s   target MAE {mae[name]:8.2f}")
    print(f"core / direct_transfer time ratio: {seconds['core'] / seconds['direct_transfer']:.2f} "
          f"({args.epochs} epochs, 300/250 regions, d 128, 1000 probes)")


if __name__ == "__main__":
    main()
