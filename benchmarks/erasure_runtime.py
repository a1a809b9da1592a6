"""Solve time of each erasure method on `concept_erasure`, as a ratio to one scoring pass (prints; asserts nothing).

    .venv/bin/python benchmarks/erasure_runtime.py            # the task's and the methods' defaults
    .venv/bin/python benchmarks/erasure_runtime.py --quick    # 40 steps per iterative method
    .venv/bin/python benchmarks/erasure_runtime.py --quick --device cuda --pipeline black-forest-labs/FLUX.1-dev \
        --concept nudity --synonyms naked,nude --preserve "clothed person,landscape,cat,car"   # the paper's model

The base model is trained (or loaded from the cache) first and is not timed. For each method this prints
its solve time, the time of one `score` call (sampling every evaluation set with the edited model), the
ratio of the two, and the concept rate; EraseAnything's cost is dominated by the sampler runs inside its
training loop (x_t for L_ESD, the synonym / irrelevant attention maps for L_rSCL).
"""

from __future__ import annotations

import argparse
import time

from bench.context import RunContext
from methods.erasure import ca, eraseanything, esd, no_erasure, uce
from tasks.erasure import concept_erasure, score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--pipeline", default="", help="a FluxPipeline hub id or directory (default: the tiny model)")
    parser.add_argument("--concept", default="seven")
    parser.add_argument("--synonyms", default="7,sieben")
    parser.add_argument("--preserve", default="zero,one,two,three,four,five,six,eight,nine")
    args = parser.parse_args()
    config = concept_erasure.Config(concept=args.concept, synonyms=tuple(args.synonyms.split(",")),
                                    preserve=tuple(args.preserve.split(",")), pipeline=args.pipeline)
    problem = concept_erasure.build(config, RunContext(args.seed, device=args.device).for_task())
    quick = {"iterations": 40} if args.quick else {}
    runs = {"no_erasure": (no_erasure, {}), "uce": (uce, {}), "esd": (esd, quick), "ca": (ca, quick),
            "eraseanything": (eraseanything, quick)}
    print(f"{'method':<14} {'solve_s':>8} {'score_s':>8} {'solve/score':>11} {'concept_rate':>12}")
    for name, (module, overrides) in runs.items():
        start = time.perf_counter()
        result = module.solve(problem, module.Config(**overrides), RunContext(args.seed, device=args.device))
        solved = time.perf_counter()
        rate = score(problem, result)["concept_rate"]
        scored = time.perf_counter()
        print(f"{name:<14} {solved - start:8.2f} {scored - solved:8.2f} {(solved - start) / (scored - solved):11.2f} "
              f"{rate:12.3f}")


if __name__ == "__main__":
    main()
