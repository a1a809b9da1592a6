"""Long-Short Alignment on the topic-Markov LM proxy: loss per length, misalignment, correlations, cost (prints only).

    flock /tmp/bench-cpu.lock .venv/bin/python benchmarks/length_generalization_alignment.py \
        [--alphas 0,0.1,0.3,1.0] [--seeds 3] [--steps 600] [--lengths 32,64,128,256]

For every α (0 = plain training) and seed: the NLL at each evaluation length, the held-out Long-Short
Misalignment, and the wall time. Then, across all the runs (α × seeds, the paper's "set of models"),
the Pearson correlation of the misalignment and of the training-length loss with the longest-length
loss and with the length gap (Table 1's comparison: 0.85 vs 0.62 at paper scale), and the cost ratio
of a regularised step to a plain one (the paper: two forward and two backward passes per step).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.context import RunContext  # noqa: E402
from methods.length_generalization import long_short_alignment  # noqa: E402
from tasks.length_generalization import score, topic_lm, trace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alphas", default="0,0.1,0.3,1.0")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lengths", default="32,64,128,256")
    parser.add_argument("--switch", type=float, default=1 / 32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    lengths = tuple(int(x) for x in args.lengths.split(","))
    rows = []
    print(f"{'alpha':>6s} {'seed':>4s} " + " ".join(f"{'NLL@' + str(L):>8s}" for L in lengths)
          + f" {'acc@' + str(lengths[-1]):>8s} {'misalign':>9s} {'wall s':>7s}")
    for alpha in (float(a) for a in args.alphas.split(",")):
        for seed in range(args.seeds):
            task_config = topic_lm.Config(switch=args.switch, train_length=lengths[0], eval_lengths=lengths)
            problem = topic_lm.build(task_config, RunContext(seed).for_task())
            config = long_short_alignment.Config(alpha=alpha, steps=args.steps, checkpoints=0)
            start = time.perf_counter()
            result = long_short_alignment.solve(problem, config, RunContext(seed))
            wall = time.perf_counter() - start
            s, curve = score(problem, result), dict(trace(problem, result)["loss_at_length"])
            rows.append((alpha, s, wall))
            print(f"{alpha:6.2f} {seed:4d} " + " ".join(f"{curve[L]:8.4f}" for L in lengths)
                  + f" {s['long_length_accuracy']:8.4f} {s['misalignment']:9.4f} {wall:7.1f}", flush=True)
    mis = np.array([s["misalignment"] for _, s, _ in rows])
    train = np.array([s["train_length_loss"] for _, s, _ in rows])
    for target in ("long_length_loss", "length_gap"):
        y = np.array([s[target] for _, s, _ in rows])
        print(f"across {len(rows)} runs: corr(misalignment, {target}) = {np.corrcoef(mis, y)[0, 1]:+.3f}, "
              f"corr(train_length_loss, {target}) = {np.corrcoef(train, y)[0, 1]:+.3f}")
    plain = [w for a, _, w in rows if a == 0]
    regular = [w for a, _, w in rows if a > 0]
    if plain and regular:
        print(f"wall-time ratio regularised / plain: {np.mean(regular) / np.mean(plain):.2f}")


if __name__ == "__main__":
    main()
