"""Wall time of each preference method on the default preference_world (tiny GPT-2, CPU), and its ratio to DPO.

Run: `python benchmarks/preference_methods.py [seed]`. The task's π_SFT is built (and cached) first, so the
times are the methods' own: sampling, training and evaluation. The issue's target is "about a minute" each.
"""

from __future__ import annotations

import sys
import time

import torch

from bench.context import RunContext
from bench.registry import Registry
from tasks.preference import preference_world, score

METHODS = ("dpo", "sft", "simplemix", "hypo", "dpo_mix_p", "epa", "simpo", "logo")


def main(seed: int = 0) -> None:
    torch.set_num_threads(1)
    registry = Registry.discover(plugins=False)
    problem = preference_world.build(preference_world.Config(), RunContext(seed=seed).for_task())
    times = {}
    for name in METHODS:
        m = registry.method(name)
        start = time.perf_counter()
        metrics = score(problem, m.solve(problem, m.Config(), RunContext(seed=seed)))
        times[name] = time.perf_counter() - start
        print(f"{name:10s} {times[name]:6.1f} s  ×{times[name] / times.get('dpo', times[name]):4.2f} of dpo  "
              f"win_rate {metrics['win_rate']:.3f}  gold_reward {metrics['gold_reward']:.3f}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
