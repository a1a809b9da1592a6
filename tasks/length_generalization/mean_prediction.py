"""Mean prediction (§3): output the mean of n equiprobable bits; trained at n ≤ 10, tested up to n = 50.

The output range [0, 1] does not depend on n, so the paper finds it extrapolates (NoPE test loss ≈ 1e-5,
Appendix C.1). Accuracy: |prediction − mean| ≤ 0.05.

Fidelity: reconstructed (protocol from the Figure 1 caption; bit inputs from a review of the earlier
version of the paper; the number of evaluation sequences is this platform's choice).
"""

from __future__ import annotations

from bench.context import RunContext
from bench.registry import task
from tasks.length_generalization import RegressionProblem
from tasks.length_generalization._bits import BitsConfig, build_bits

SMALLEST = {"eval_lengths": (10, 20), "eval_sequences": 16}
Config = BitsConfig


@task(family="length_generalization", config=Config, version=1, problem=RegressionProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> RegressionProblem:
    return build_bits(config, "mean", 0.05, ctx.rng)
