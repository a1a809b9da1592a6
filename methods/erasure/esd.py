"""ESD: erase a concept by fine-tuning towards negatively guided predictions (the baseline).

Gandikota, Materzyńska, Fiotto-Kaufman & Bau, "Erasing Concepts from Diffusion Models", ICCV 2023,
arXiv 2303.07345 (Eq. 7), in the flow-matching form EraseAnything's Eq. 2 uses on Flux:

    ‖v_θ(x_t, t | c) − [v*(x_t, t) − η (v*(x_t, t | c) − v*(x_t, t))]‖²,

x_t sampled by the model being tuned from noise down to a random t under the concept prompt c,
v* the frozen original model, the unconditional prediction from the empty prompt, η = 1. ESD-x
tunes the cross-attention weights; its Flux analogue here is the full weights of the text-stream
projections of the joint attention (add_q/k/v_proj, to_add_out) of every dual-stream block.

Fidelity: faithful to the loss. Deviations: 200 Adam steps at lr 3e-4 (ESD: 1000 steps at 1e-5, for
SD's 860M-parameter UNet); the concept prompt is a random template with the concept word (no
synonyms: ESD erases the text it is given); the task's Euler sampler with guidance 3 for x_t (14 steps on the
tiny model, 28 on a pipeline). On a
FluxPipeline the "unconditional" prediction is the empty prompt at Flux-dev's guidance embedding, and the
full-weight updates are bfloat16 on CUDA.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.erasure._common import (
    esd_target,
    finetune,
    frozen_copy,
    mse,
    paper_timestep,
    partial_sample,
    text_stream_parameters,
    times,
)
from tasks.erasure import RESOURCES, ErasureProblem, ErasureResult

SMOKE = {"iterations": 4}

SWITCHED_OFF = "a baseline of the paper (ESD, full-weight fine-tuning): no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    iterations: int = 200          # fine-tuning steps (ESD: 1000)
    lr: float = 3e-4               # Adam learning rate (ESD: 1e-5 on SD; scaled for a tiny model)
    eta: float = 1.0               # η, negative guidance
    modules: tuple[str, ...] = ("add_q_proj", "add_k_proj", "add_v_proj", "to_add_out")  # ESD-x analogue

    def __post_init__(self) -> None:
        if self.iterations < 1 or self.lr <= 0 or self.eta < 0 or not self.modules:
            raise ValueError(f"need iterations >= 1, lr > 0, eta >= 0 and at least one module; got {self}")


@method(family="erasure", config=Config, hardware=("cpu", "cuda"), resources=RESOURCES, smoke=SMOKE)
def solve(problem: ErasureProblem, config: Config, ctx: RunContext) -> ErasureResult:
    rng, generator, backbone = ctx.rng, ctx.torch_generator, problem.backbone
    model, original = frozen_copy(problem.transformer), problem.transformer
    params = text_stream_parameters(model, config.modules)
    empty = problem.encode([""])

    def loss_fn(step: int):
        prompt = problem.templates[rng.integers(len(problem.templates))].format(problem.concept)
        text = problem.encode([prompt])
        t = paper_timestep(rng, problem.sample_steps)
        tt = times(problem, t)
        x_t = partial_sample(model, problem, text, backbone.noise(1, generator), t)
        target = esd_target(backbone, original, x_t, tt, text, empty, config.eta)
        return mse(backbone.velocity(model, x_t, text, tt), target), {}

    finetune(params, loss_fn, config.iterations, config.lr, ctx)
    return ErasureResult(transformer=model.requires_grad_(False).eval())
