"""What both methods do with their refusal direction: ablate it (§3.4) and attack along it (§3.5)."""

from __future__ import annotations

import numpy as np

from methods.safety._hooks import Ablation, eligible, rewrite, trigger_removal
from tasks.safety import ANALYSIS, TEST, RefusalProblem, chat_prompts
from tasks.safety import refusals as refusals

REFERENCES = ("harmless_mean", "zero")


def make_ablation(problem: RefusalProblem, direction: np.ndarray, tuned_states: np.ndarray, reference: str,
                  last_token_only: bool) -> Ablation:
    """The ablation of unit `direction` at every layer. reference "zero": the paper's projection mode
    (the component is removed); "harmless_mean": the component is set, per layer, to its mean over the
    harmless analysis prompts in the fine-tuned model (affine ablation; tuned_states (L+1, n, d))."""
    if reference not in REFERENCES:
        raise ValueError(f"ablation reference {reference!r} unknown; allowed: {', '.join(REFERENCES)}")
    offset = None
    if reference == "harmless_mean":
        safe = (problem.split == ANALYSIS) & ~problem.harmful
        offset = (tuned_states[:, safe] @ direction).mean(1)[:, None]          # (L+1, 1)
    return Ablation(direction[None, :], offset=offset, last_token_only=last_token_only)


def ablate_and_attack(problem: RefusalProblem, ablate: Ablation, layer: int, n_words: int,
                      rng: np.random.Generator) -> dict:
    """The RefusalResult fields shared by every method: refusals under `ablate`, and the trigger-removal
    attack (relevance to the ablated direction at `layer` on the base model, the paper's reference
    model) on the harmful jailbreak-wrapped test prompts, with a control rewriting random words."""
    n, direction = len(problem.prompts), ablate.directions[0]
    mask = (problem.split == TEST) & problem.harmful & (problem.style > 0)
    attacked, control = [""] * n, [""] * n
    formatted = chat_prompts(problem.tokenizer, problem.prompts)
    for i in np.flatnonzero(mask):
        message = problem.prompts[i]
        attacked[i] = trigger_removal(problem.base_model, problem.tokenizer, formatted[i], message, layer, direction,
                                      problem.synonyms, n_words, problem.device)
        words = eligible(message)
        control[i] = rewrite(message, set(rng.choice(words, size=min(n_words, len(words)), replace=False).tolist()),
                             problem.synonyms)
    attacked_refused, random_refused = np.zeros(n, bool), np.zeros(n, bool)
    if mask.any():
        attacked_refused[mask] = refusals(problem, [attacked[i] for i in np.flatnonzero(mask)])
        random_refused[mask] = refusals(problem, [control[i] for i in np.flatnonzero(mask)])
    return {"ablated_refused": refusals(problem, problem.prompts, ablate), "attack_mask": mask,
            "attacked_prompts": tuple(attacked), "attacked_refused": attacked_refused, "random_refused": random_refused,
            "ablation": ablate, "random_prompts": tuple(control)}

