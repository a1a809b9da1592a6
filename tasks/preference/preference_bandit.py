"""Tabular contextual-bandit preference world: EPA's exact identifiability testbed (P prompts × V one-token answers).

Hong et al., "Energy-Based Preference Model Offers Better Offline Alignment than the Bradley-Terry Preference
Model", ICML 2025, arXiv 2412.13862; docs/papers/epa.md. The world (true reward, π_ref, behaviour
policy, annotator, policies) is in tasks/preference/_bandit.py.

Build: r* (P × V, low-rank plus noise, variance 1), π_ref (random non-uniform logits), then `lists_per_prompt`
UF-all-like lists per prompt of K distinct responses from the behaviour policy, ranked best first by the
annotator (Plackett–Luce in r*/τ), and each list's UF-binarized-like pair (best vs one random other member).
Everything a method needs is in the returned BanditPreferenceProblem; scoring is exact over the whole table.

Fidelity: reconstructed (our world; the paper's own experiments use UltraFeedback and a 7B model).
Our own choices: ρ = 0.75 of r*'s variance low-rank (rank 4); π_ref logits of std 1; PL labels at
τ = 1, so the BT-scale target r*/τ is r* itself; 16 lists per prompt rather than UltraFeedback's one (with 16
prompts and one list each, every method ends at the same policy, all mass on each prompt's single winner, and
the seen set is 4 cells per prompt): the seen set then covers a good share of V while each pair the data
compares is still compared about once, a sparse comparison graph as in UltraFeedback. The data are nearly
separable, so neither the DPO nor the EPA loss has a finite minimiser in every direction (a response that only
ever wins keeps rising): the methods train for a fixed budget. KL–reward frontier: J at KL = `kl_budget` = 1
nat along each method's training trace, and the slope-1 error of the claims is read there too (`slope1_error_at_kl`:
training stopped at that KL; the final ε̂ grows with the budget).

Version 2: score gained `slope1_error_at_kl` (runs stored under version 1 lack it and are re-run).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import task
from tasks.preference import BanditPreferenceProblem
from tasks.preference._bandit import behaviour_logp, log_softmax, rank_lists, sample_lists, true_reward

BEHAVIOURS = ("reference", "mixture")
LABELS = ("plackett_luce", "sorted")
SMALLEST = {"lists_per_prompt": 4}


@dataclass(frozen=True)
class Config:
    prompts: int = 16                 # P (CPU world)
    responses: int = 64               # V single-token responses (CPU world)
    list_size: int = 4                # K responses per list (UltraFeedback: 4)
    lists_per_prompt: int = 16        # annotated lists per prompt
    reward_rank: int = 4              # d of r*'s shared low-rank part
    shared: float = 0.75              # ρ, share of r*'s variance in the low-rank part
    reference_scale: float = 1.0      # std of π_ref's logits
    behaviour: str = "reference"      # sampler of the lists: π_ref, or a mixture of π_ref and 3 other random policies
    labels: str = "plackett_luce"     # annotator: Plackett–Luce in r*/τ, or sorted by r*
    label_temperature: float = 1.0    # τ
    kl_budget: float = 1.0            # KL (nats) at which true_value_at_kl reads each method's training trace

    def __post_init__(self) -> None:
        if self.prompts < 2 or self.list_size < 2 or self.responses < self.list_size or self.lists_per_prompt < 1:
            raise ValueError(f"need prompts >= 2, list_size >= 2, responses >= list_size, lists_per_prompt >= 1; got "
                             f"{self.prompts}, {self.list_size}, {self.responses}, {self.lists_per_prompt}")
        if self.reward_rank < 1 or not 0 <= self.shared <= 1 or self.reference_scale < 0 \
                or not self.label_temperature > 0 or not self.kl_budget > 0:
            raise ValueError(f"need reward_rank >= 1, 0 <= shared <= 1, reference_scale >= 0, label_temperature > 0, "
                             f"kl_budget > 0; got {self.reward_rank}, {self.shared}, {self.reference_scale}, "
                             f"{self.label_temperature}, {self.kl_budget}")
        if self.behaviour not in BEHAVIOURS or self.labels not in LABELS:
            raise ValueError(f"behaviour {self.behaviour!r} (allowed: {', '.join(BEHAVIOURS)}) "
                             f"or labels {self.labels!r} (allowed: {', '.join(LABELS)}) unknown")


@task(family="preference", config=Config, version=2, problem=BanditPreferenceProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> BanditPreferenceProblem:
    rng = ctx.rng
    reward = true_reward(config.prompts, config.responses, config.reward_rank, config.shared, rng)
    ref_logp = log_softmax(config.reference_scale * rng.standard_normal((config.prompts, config.responses)))
    behaviour = behaviour_logp(ref_logp, config.behaviour, config.reference_scale, rng)
    prompts, lists = sample_lists(behaviour, config.lists_per_prompt, config.list_size, rng)
    ranked = rank_lists(reward, prompts, lists, config.labels, config.label_temperature, rng)
    other = rng.integers(1, config.list_size, size=len(ranked))              # UF-binarized: best vs a random other
    return BanditPreferenceProblem(ref_logp=ref_logp, list_prompts=prompts, lists=ranked,
                                   binarized=ranked[np.arange(len(ranked)), other],
                                   label_temperature=config.label_temperature, true_reward=reward,
                                   kl_budget=config.kl_budget)
