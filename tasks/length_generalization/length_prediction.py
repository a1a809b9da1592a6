"""Length prediction (§3): output n, the number of input bits; trained at n ≤ 10, tested up to n = 50.

The output support grows with n, so the paper finds it fails beyond the training range (Theorem 3.1:
error O((l_test − l_train)²)); output reparameterisation (predict 1/√n) repairs much of it.
Accuracy: |prediction − n| ≤ 0.5 (the rounded count is right).

Fidelity: reconstructed (protocol from the Figure 1 caption; the element distribution, irrelevant to
the target, is equiprobable bits as for mean prediction).
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
    return build_bits(config, "length", 0.5, ctx.rng)
