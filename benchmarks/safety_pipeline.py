"""Where the time of a `multi_direction` run on `refusal_finetune` goes (prints; asserts nothing).

    .venv/bin/python benchmarks/safety_pipeline.py            # default CPU scale (tiny Llama, d = 64, 480 prompts)
    .venv/bin/python benchmarks/safety_pipeline.py --smallest # the conformance instance

Prints the task build time (training the tiny base and SSFT models when the cache under --cache is empty,
then a cached rebuild), each method's solve time, and the ratio multi_direction / single_direction.
The target: a cached default build + multi_direction solve under a minute on a laptop CPU.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from bench.context import RunContext
from methods.safety import multi_direction, single_direction
from tasks.safety import refusal_finetune, score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smallest", action="store_true")
    parser.add_argument("--cache", default=None, help="cache root directory, as $BENCH_CACHE_DIR (default: a fresh "
                        "temporary one)")
    args = parser.parse_args()
    cache = args.cache or tempfile.mkdtemp(prefix="safety-bench-")
    overrides = refusal_finetune.SMALLEST if args.smallest else {}
    config = refusal_finetune.Config(**overrides)
    builds = []
    for label in ("train + build", "cached build"):
        start = time.perf_counter()
        problem = refusal_finetune.build(config, RunContext(0, cache_root=cache).for_task())
        builds.append(time.perf_counter() - start)
        print(f"{label:>14}: {builds[-1]:6.1f} s")
    solves = {}
    for module in (multi_direction, single_direction):
        start = time.perf_counter()
        result = module.solve(problem, module.Config(), RunContext(0))
        solves[module.__name__.rsplit(".", 1)[-1]] = time.perf_counter() - start
        metrics = score(problem, result)
        print(f"{module.__name__.rsplit('.', 1)[-1]:>16}: {solves[module.__name__.rsplit('.', 1)[-1]]:6.1f} s  "
              f"best-layer acc {metrics['best_layer_accuracy']:.3f}  "
              f"ablation drop {metrics['ablation_refusal_drop']:.2f}  "
              f"attack success {metrics.get('attack_success', float('nan')):.2f}")
    print(f"cached build + multi_direction: {builds[1] + solves['multi_direction']:.1f} s; "
          f"ratio multi / single solve: {solves['multi_direction'] / solves['single_direction']:.2f}")


if __name__ == "__main__":
    main()
