"""Speculative decoding on the tiny heterogeneous-vocabulary pairs: target calls per token and speedups.

For every method (autoregressive, standard SD, SLEM, TLI, SLRS) in greedy and sampling mode where the
paper defines it, prints target forward passes per generated token, the reduction against
autoregressive decoding (1 / target_calls_per_token), acceptance rate, wall-clock tok/s and speedup
over autoregressive decoding timed in the same process, and the modelled speedup
tokens / (target calls + c·drafter calls) for c = c_D/c_T ∈ {0.01, 0.05, 0.2} (spec §6.2).

    flock /tmp/bench-cpu.lock .venv/bin/python benchmarks/decoding_speedup.py [--quick]

Wall clock on these tiny models is dominated by Python and tokenizer overhead, so it understates what
fewer target calls buy a large target; the modelled speedups show that part.
"""

from __future__ import annotations

import argparse
import dataclasses

from bench.context import RunContext
from methods.decoding import autoregressive, slem, slrs, speculative, tli
from tasks.decoding import score
from tasks.decoding.hetero_vocab_pairs import Config, build

RUNS = [("autoregressive", autoregressive, False), ("speculative", speculative, False), ("slem", slem, False),
        ("tli", tli, False), ("autoregressive", autoregressive, True), ("speculative", speculative, True),
        ("slem", slem, True), ("tli", tli, True), ("slrs", slrs, True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one prompt per kind, 16 new tokens")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    config = Config(prompts_per_kind=1, max_new_tokens=16) if args.quick else Config()
    problem = build(config, RunContext(seed=args.seed))
    slrs_problem = dataclasses.replace(problem, prompts=problem.prompts[:: config.prompts_per_kind],
                                       reference=problem.reference[:: config.prompts_per_kind],
                                       kinds=problem.kinds[:: config.prompts_per_kind])  # ψ is exponential
    print(f"pairs: target {problem.target.name}, drafter {problem.drafter.name}; {len(problem.prompts)} prompts, "
          f"max {problem.max_new_tokens} new tokens (SLRS: {len(slrs_problem.prompts)} prompts)")
    header = (f"{'method':<15}{'mode':<8}{'calls/tok':>10}{'fewer':>8}{'accept':>8}{'tok/s':>9}{'speedup':>9}"
              + "".join(f"{'model c=' + str(c):>13}" for c in (0.01, 0.05, 0.2)) + f"{'exact':>7}")
    print(header)
    ar_tps = {}
    for name, module, sample in RUNS:
        instance = slrs_problem if name == "slrs" else problem
        result = module.solve(instance, module.Config(do_sample=sample), RunContext(seed=args.seed))
        s = score(instance, result)
        tokens = s["new_tokens"]
        if name == "autoregressive":
            ar_tps[sample] = s["tokens_per_second"]
        modelled = [tokens / (result.target_calls + c * result.drafter_calls) for c in (0.01, 0.05, 0.2)]
        print(f"{name:<15}{'sample' if sample else 'greedy':<8}{s['target_calls_per_token']:>10.3f}"
              f"{1 / s['target_calls_per_token']:>7.2f}x{s.get('acceptance_rate', float('nan')):>8.3f}"
              f"{s['tokens_per_second']:>9.1f}{s['tokens_per_second'] / ar_tps[sample]:>8.2f}x"
              + "".join(f"{m:>12.2f}x" for m in modelled) + f"{s.get('greedy_exact_match', float('nan')):>7.2f}")


if __name__ == "__main__":
    main()
