"""Keyword deletion: the positive control of the concept-erasure world (the concept removed by construction).

The base model is left as it is, but every prompt it reads has the deleted words taken out: the edited transformer's
text projection (`context_embedder`, the only entry of the text into Flux's joint attention) receives the token
embeddings of the prompt without the words instead of the prompt's own. With the concept's keyword and its synonyms
deleted, no concept-prompt generation is told the concept: the model samples what it renders for the prompt without
a digit word (the anchor prompts it was trained on, docs/papers/eraseanything.md), so the concept rate falls to the
rate at which the judge finds the concept among unconditioned digits, and nothing else changes (the preserved
prompts hold no keyword: their generations are the base model's). This is what an ideal erasure would reach: if the
judge labelled such generations as the concept, or the concept were rendered from the rest of the prompt, the
concept rate could not show erasure at all and the gated claims would be inconclusive
(leaderboard/papers/eraseanything.yaml, `controls:`).

`words`: the words to delete; empty: the concept and its synonyms (`problem.keywords`). Another concept's word
("zero", a preserved concept) is the null of the erasure control: the same deletion on a token that does not carry
the concept, so the concept prompts reach the model unchanged; in turn it is a planted loss of one preserved concept,
which the preservation metric must see.

How the deletion reaches the model: the tiny world's text encoder is contextual (a 1-layer transformer: every
token's embedding depends on every word) and frozen inside the problem, so the deletion cannot be a row of its
embedding table. The oracle reads the world's prompt sets instead (`problem.eval_prompts`, the prompts the judge
scores), encodes each prompt that holds a deleted word and the same prompt without it, and swaps the one for the
other in front of the text projection: a row of token embeddings within `tolerance` (relative Euclidean distance)
of a stored prompt's is replaced by that prompt's deleted version; every other row (the empty prompt of guidance,
prompts without the words) passes unchanged.

Fidelity: not a paper's method (a control of our world); reads the world's evaluation prompts and which words name
the concept. The tiny digit world only (skipped on a FluxPipeline).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from bench.context import RunContext
from bench.registry import method
from methods.erasure._common import frozen_copy
from tasks.erasure import RESOURCES, ErasureProblem, ErasureResult

SWITCHED_OFF = "an oracle (deletes the concept's keywords from every scored prompt), the world's positive control"


@dataclass(frozen=True)
class Config:
    words: tuple[str, ...] = ()    # words deleted from every prompt; () = the concept and its synonyms
    tolerance: float = 1e-3        # a text row matches a stored prompt within this relative distance

    def __post_init__(self) -> None:
        if not 0 < self.tolerance < 0.1 or any(not w.strip() or " " in w for w in self.words):
            raise ValueError(f"need 0 < tolerance < 0.1 and single words; got {self}")


def deleted_words(problem: ErasureProblem, config: Config) -> tuple[str, ...]:
    return tuple(config.words) or problem.keywords


def without(prompt: str, words: tuple[str, ...]) -> str:
    """The prompt with every occurrence of the words taken out."""
    return " ".join(w for w in prompt.split() if w not in words)


def skip(problem, config: Config) -> str | None:
    if not isinstance(problem, ErasureProblem):
        return f"keyword_deletion takes ErasureProblem, not {type(problem).__name__}"
    if getattr(problem.backbone, "pipe", None) is not None:
        return "keyword_deletion is a control of the tiny digit world (a FluxPipeline's prompts are not tabulated)"
    words = deleted_words(problem, config)
    if not any(w in p.split() for prompts in problem.eval_prompts.values() for p in prompts for w in words):
        return f"none of the words {list(words)} occurs in the task's prompts"
    return None


class DeletedProjection(nn.Module):
    """The text projection applied to each row's deleted prompt: rows matching a stored prompt are swapped first."""

    def __init__(self, projection: nn.Module, keys: torch.Tensor, values: torch.Tensor, tolerance: float):
        super().__init__()
        self.projection, self.tolerance = projection, tolerance
        self.register_buffer("keys", keys.reshape(len(keys), -1))   # (N, L · d) token embeddings of the prompts
        self.register_buffer("values", values)                       # (N, L, d) of the same prompts, words deleted

    def swap(self, text: torch.Tensor) -> torch.Tensor:
        flat = text.reshape(len(text), -1).to(self.keys.dtype)
        distance = torch.cdist(flat, self.keys, compute_mode="donot_use_mm_for_euclid_dist")
        best, index = distance.min(dim=1)
        hit = best <= self.tolerance * flat.norm(dim=1).clamp_min(1e-12)
        return torch.where(hit[:, None, None], self.values[index].to(text.dtype), text)

    def forward(self, text: torch.Tensor) -> torch.Tensor:
        return self.projection(self.swap(text))


@method(family="erasure", config=Config, skip=skip, hardware=("cpu", "cuda"), resources=RESOURCES,
        reference="deletes the concept's keywords from every prompt the judge scores: the world's positive control")
def solve(problem: ErasureProblem, config: Config, ctx: RunContext) -> ErasureResult:
    words = deleted_words(problem, config)
    prompts = sorted({p for ps in problem.eval_prompts.values() for p in ps if any(w in p.split() for w in words)})
    keys = problem.encode(prompts).tokens
    values = problem.encode([without(p, words) for p in prompts]).tokens
    model = frozen_copy(problem.transformer)
    model.context_embedder = DeletedProjection(model.context_embedder, keys, values, config.tolerance)
    ctx.log(0, prompts_swapped=len(prompts))
    return ErasureResult(transformer=model.eval())
