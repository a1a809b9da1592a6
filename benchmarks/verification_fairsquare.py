"""PV on the whole FairSquare suite against Monte-Carlo "to the same certainty" (prints; asserts nothing).

    .venv/bin/python benchmarks/verification_fairsquare.py [--time-limit 60]

For each of the 36 instances: PV's wall time to a proof (verdict, [lb, ub] of the ratio), and the
wall time Monte-Carlo (Clopper–Pearson, doubling batches) needs until its confidence interval
decides the same formula, at confidence 1 − 10⁻³ and 1 − 10⁻⁶. MC's verdict is statistical: it
is never the certainty PV reaches, so "the same certainty" is read as "the same decision, at
high confidence", which favours MC. Sums over the suite at the end. PV's settings: batch 1024
(the paper's for FairSquare), split scores with CROWN (see methods/verification/pv.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.context import RunContext  # noqa: E402
from methods.verification import monte_carlo, pv  # noqa: E402
from tasks.verification.fairsquare import NETWORKS, POPULATIONS, Config, build  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--time-limit", type=float, default=60.0, help="per instance, PV and MC alike")
    args = parser.parse_args()
    pv_config = pv.Config(batch_size=1024, split_bounds="crown", time_limit_s=args.time_limit)
    confidences = (1 - 1e-3, 1 - 1e-6)
    totals = {"pv": 0.0, **{c: 0.0 for c in confidences}}
    agree, decided = 0, 0
    print(f"{'instance':38s} {'PV verdict':>10s} {'ratio lb':>9s} {'ratio ub':>9s} {'PV s':>7s} "
          + " ".join(f"{'MC s @' + format(1 - c, '.0e'):>12s} {'MC verdict':>10s}" for c in confidences))
    for network in NETWORKS:
        for population in POPULATIONS:
            for qualified in (False, True):
                problem = build(Config(network=network, population=population, qualified=qualified), RunContext(0))
                start = time.perf_counter()
                result = pv.solve(problem, pv_config, RunContext(0))
                pv_s = time.perf_counter() - start
                totals["pv"] += pv_s
                decided += result.verdict is not None
                row = (f"{problem.name[11:]:38s} {str(result.verdict):>10s} {result.target[0]:9.4f} "
                       f"{result.target[1]:9.4f} {pv_s:7.2f} ")
                for c in confidences:
                    start = time.perf_counter()
                    mc = monte_carlo.solve(problem, monte_carlo.Config(confidence=c, max_samples=100_000_000,
                                                                      time_limit_s=args.time_limit), RunContext(0))
                    mc_s = time.perf_counter() - start
                    totals[c] += mc_s
                    agree += c == confidences[0] and mc.verdict == result.verdict
                    row += f"{mc_s:12.2f} {str(mc.verdict):>10s} "
                print(row, flush=True)
    print(f"\nPV decided {decided}/36; suite wall time PV {totals['pv']:.1f} s")
    for c in confidences:
        print(f"Monte-Carlo until its {c:.6f}-confidence interval decides: suite wall time {totals[c]:.1f} s")
    print(f"MC (1 − 1e-3) verdict equal to PV's on {agree}/36")


if __name__ == "__main__":
    main()
