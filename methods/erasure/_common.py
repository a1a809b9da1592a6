"""Helpers the erasure methods share: LoRA through peft, prompts, timesteps, the ESD target, fine-tuning.

* `add_lora`: peft LoRA (gaussian init: A ~ N(0, 1/r), B = 0, so the adapted model starts equal to
  the base) on the named attention projections of every dual-stream block; `merge` folds it back:
  W' = W + (α / r) B A, the base weights untouched while training.
* `augmented_prompt`: the paper's prompt augmentation (lora_dataset.py): a random template with the
  keyword, its words shuffled with probability 0.9, then the keyword replaced by a random synonym
  with probability 0.5; returns the keyword's token indices K.
* `paper_timestep`: t_enc ~ U{0..n−1}, t ~ U[t_enc/n, (t_enc+1)/n) for the sampler's n steps (the code: n = 28, its
  1000-scale divided by 1000; the tiny model samples with n = 14).
* `esd_target`: the negative-guidance target v_0 − η (v_p − v_0) of ESD (Gandikota et al. 2023, Eq. 7).

Everything model-specific goes through `problem.backbone` (tasks/erasure/_backbone.py), so the same
code runs on the tiny digit Flux and on a FluxPipeline's transformer, on the problem's device
(`ctx.device`: the task built the backbone there). Random draws come from the run's generator on its own
device and are moved to the backbone's device and dtype; losses are computed in float32.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from peft import LoraConfig, get_peft_model

from bench.toolkit.training import seeded
from tasks.erasure import ErasureProblem


def frozen_copy(transformer: torch.nn.Module) -> torch.nn.Module:
    model = copy.deepcopy(transformer)
    return model.requires_grad_(False)


def add_lora(transformer: torch.nn.Module, rank: int, alpha: float, modules: tuple[str, ...],
             generator: torch.Generator):
    """A peft model with LoRA on `transformer_blocks.*.attn.<module>` (dual-stream blocks only)."""
    config = LoraConfig(r=rank, lora_alpha=alpha, init_lora_weights="gaussian",
                        target_modules=rf"transformer_blocks\.\d+\.attn\.({'|'.join(modules)})")
    # peft draws A from the global generator
    with seeded(int(torch.randint(2**31 - 1, (1,), generator=generator, device=generator.device)), device=None):
        return get_peft_model(frozen_copy(transformer), config)


def merge(peft_model) -> torch.nn.Module:
    """W ← W + (α/r) B A for every adapted layer; returns the plain diffusers model."""
    return peft_model.merge_and_unload().requires_grad_(False).eval()


def prompt_with(prompt_words: list[str], position: int, word: str | None) -> str:
    """The prompt with the word at `position` replaced (None: removed)."""
    words = list(prompt_words)
    if word is None:
        del words[position]
    else:
        words[position] = word
    return " ".join(words)


def template_words(template: str, keyword: str) -> list[str]:
    """The template's words with its "{}" word replaced by the keyword as one item (keywords may be several words)."""
    return [keyword if w == "{}" else w for w in template.split()]


def augmented_prompt(problem: ErasureProblem, rng: np.random.Generator, shuffle_p: float = 0.9,
                     synonym_p: float = 0.5) -> tuple[list[str], list[int]]:
    """(prompt words, keyword word positions): a concept prompt with the paper's shuffle / synonym augmentation."""
    template = problem.templates[rng.integers(len(problem.templates))]
    words = template_words(template, problem.concept)
    if rng.random() < shuffle_p:
        words = [str(w) for w in rng.permutation(words)]
    positions = [i for i, w in enumerate(words) if w in problem.keywords]
    if rng.random() < synonym_p:  # K still points to the same positions
        for i in positions:
            words[i] = str(problem.synonyms[rng.integers(len(problem.synonyms))])
    return words, positions


def paper_timestep(rng: np.random.Generator, steps: int = 28) -> float:
    t_enc = rng.integers(steps)
    return float(rng.uniform(t_enc / steps, (t_enc + 1) / steps))


def times(problem: ErasureProblem, t: float, n: int = 1) -> torch.Tensor:
    """(n,) copies of t on the backbone's device (float32: the transformer casts it to its own dtype)."""
    return torch.full((n,), t, device=problem.backbone.device)


def uniform(problem: ErasureProblem, n: int, generator: torch.Generator) -> torch.Tensor:
    """(n,) U[0, 1) draws from the run's generator, on the backbone's device."""
    return torch.rand(n, generator=generator, device=generator.device).to(problem.backbone.device)


def partial_sample(transformer, problem: ErasureProblem, text, noise: torch.Tensor, t: float):
    """x_t: the sampler run from noise (t = 1) down to t under `text`, without gradients (ESD's x_t)."""
    return problem.backbone.sample(transformer, text, noise, t_stop=t)


def esd_target(backbone, model, x: torch.Tensor, t: torch.Tensor, text_p, text_0, eta: float) -> torch.Tensor:
    """v_0 − η (v_p − v_0) with v_0 = v(x, t | p0) and v_p = v(x, t | p), no gradients."""
    with torch.no_grad():
        v_0 = backbone.velocity(model, x, text_0, t)
        v_p = backbone.velocity(model, x, text_p, t)
    return v_0 - eta * (v_p - v_0)


def mse(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.float() - b.float()).square().mean()


def noisy(x0: torch.Tensor, noise: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """x_t = (1 − t) x0 + t ε (the custom scheduler's add_noise), in the latents' dtype."""
    return ((1 - t[:, None, None]) * x0 + t[:, None, None] * noise).to(x0.dtype)


def text_stream_parameters(transformer: torch.nn.Module, modules: tuple[str, ...]) -> list[torch.nn.Parameter]:
    """Full weights of the named projections of every dual-stream block, made trainable."""
    params = []
    for block in transformer.transformer_blocks:
        for name in modules:
            layer = getattr(block.attn, name)
            layer.requires_grad_(True)
            params += list(layer.parameters())
    return params


def finetune(params: list[torch.nn.Parameter], loss_fn, steps: int, lr: float, ctx) -> None:
    """Adam on `params` for `steps` steps of `loss_fn(step) -> (loss, {curve: value})`."""
    optimiser = torch.optim.Adam(params, lr=lr)
    for step in range(steps):
        loss, curves = loss_fn(step)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        ctx.log(step, loss=float(loss.detach()), **curves)
        ctx.progress((step + 1) / steps)
        ctx.check_deadline()
