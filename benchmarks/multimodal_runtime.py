"""Runtime of the multimodal methods and of M3-JEPA's sparse MoE dispatch (prints; asserts nothing).

    .venv/bin/python benchmarks/multimodal_runtime.py [--epochs N]

Target (issue, multimodal family): `bench run --method m3_jepa --task paired_retrieval` well under a few
minutes on a CPU. Prints each method's wall time and mean recall at the defaults on one seed, the
ratio of M3-JEPA's time to the contrastive baseline's, and the time of one forward+backward of the
predictor with the top-k dispatch (each expert sees only its tokens) vs a dense mixture (every expert
on every token, weights zero outside the top-k) at the CPU size (E = 4, k = 2) and at E = 12, k = 4.
"""

from __future__ import annotations

import argparse
import time

import torch

from bench.context import RunContext
from methods.multimodal import _moe, contrastive, linear_predictor, m3_jepa
from tasks.multimodal import paired_retrieval, score


def dense_forward(self, u):
    _, values, index = self.route(u)
    weights = torch.zeros(u.shape[0], len(self.experts)).scatter(-1, index, values)
    return sum(weights[:, e:e + 1] * net(u) for e, net in enumerate(self.experts)), index


def step_ms(experts: int, top_k: int, dense: bool, repeats: int = 30) -> float:
    torch.manual_seed(0)
    model = _moe.M3Predictor(64, 64, 64, experts, top_k, 0.1)
    x, mask = torch.randn(120, 9, 64), torch.ones(120, 9, dtype=torch.bool)
    original = _moe.MoE.forward
    _moe.MoE.forward = dense_forward if dense else original
    try:
        start = time.perf_counter()
        for _ in range(repeats):
            y, c = model("i2t", x, mask)
            (y.sum() + c.sum()).backward()
        return (time.perf_counter() - start) / repeats * 1e3
    finally:
        _moe.MoE.forward = original


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=60)
    args = parser.parse_args()
    problem = paired_retrieval.build(paired_retrieval.Config(), RunContext(0).for_task())
    times = {}
    for name, module, config in (("m3_jepa", m3_jepa, m3_jepa.Config(epochs=args.epochs)),
                                 ("contrastive", contrastive, contrastive.Config(epochs=args.epochs)),
                                 ("linear_predictor", linear_predictor, linear_predictor.Config())):
        start = time.perf_counter()
        result = module.solve(problem, config, RunContext(0))
        times[name] = time.perf_counter() - start
        print(f"{name:17s} {times[name]:6.1f} s  mean_recall {score(problem, result)['mean_recall']:.3f}")
    print(f"m3_jepa / contrastive time ratio: {times['m3_jepa'] / times['contrastive']:.2f}")
    for experts, top_k in ((4, 2), (12, 4)):
        sparse, dense = step_ms(experts, top_k, False), step_ms(experts, top_k, True)
        print(f"E={experts:2d} k={top_k}: top-k dispatch {sparse:.1f} ms/step, dense {dense:.1f} ms/step, "
              f"ratio dense/top-k {dense / sparse:.2f}")


if __name__ == "__main__":
    main()
