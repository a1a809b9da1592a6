"""Self-drafting oracle: the target is its own drafter, the positive control of the decoding world.

No drafter can know the target better than the target itself, so this is the upper bound of what drafting can buy
in a world (docs/papers/hetero-vocab-sd.md, "The world can show the effect"). Each round a second KV cache of the
target model drafts up to k tokens with the methods' own drafting rule (`_sd.draft_tokens`: sampled at temperature 1
or argmax, stopping when the top probability falls below the confidence threshold), and the target verifies them in
one forward pass with the rule of the paper's heterogeneous methods:

* `exact_match` (default): SLEM's exact matching under sampling (Algorithm 2 with sampling): the target samples
  x_i ~ p(·|y, t_<i) and a candidate survives iff it equals x_i. With the target drafting, a candidate is accepted
  with probability Σ_x p(x)², the target's collision probability at that position: near 1 where the world's text
  is predictable, near 1/|T| where it is noise. This is what makes the control able to fail: a world whose target
  is too uncertain at temperature 1 cannot show a ≥ 2x saving for any drafter, this one included.
* `exact_match: false`: the speculative-sampling rule min(1, p/q) (TLI's and standard SD's); with q = p every
  draft is accepted by construction, so it measures only the draft lengths the confidence rule allows.
Under greedy decoding (`do_sample: false`) every draft is the target's argmax and is accepted by construction.

`shift`: the null. The drafter's next-token distribution is the target's with the token ids moved by one,
q(x) = p(x − 1 mod |T|): the same model and, at every step, the same top probability (so the same stopping rule),
but its mass sits on the wrong ids, so its drafts are accepted only by chance (Σ_x p(x)·p(x − 1)).

Fidelity: not a paper's method (a control of our world); reads the target model a second time as its drafter
(`problem.self_drafter`: the target's weights behind a handle the task counts as a drafter, so its drafting passes
are drafter calls, not target calls), so its drafter calls cost a target forward each (the modelled speedup is not
meaningful for it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from methods.decoding._cache import CachedLM
from methods.decoding._sd import Counts, cpu_generator, decode_all, draft_tokens, verify
from tasks.decoding import DecodingProblem, DecodingResult

SMOKE = {"num_assistant_tokens": 4}

SWITCHED_OFF = "an oracle (the target drafts for itself), the world's positive control: no mechanism to remove"


@dataclass(frozen=True)
class Config:
    do_sample: bool = True              # temperature 1 (True) or greedy, T = 0 (False: accepted by construction)
    exact_match: bool = True            # SLEM's exact-match verification (True) or min(1, p/q) (False)
    num_assistant_tokens: int = 20      # k, draft length (the methods' default, HF's 20)
    confidence_threshold: float = 0.4   # drafting stops when max q < this (the methods' default)
    shift: bool = False                 # the null: the drafter's distribution moved by one token id

    def __post_init__(self) -> None:
        if self.num_assistant_tokens < 1:
            raise ValueError(f"num_assistant_tokens must be >= 1, got {self.num_assistant_tokens}")
        if not 0.0 <= self.confidence_threshold <= 1.0:
            raise ValueError(f"confidence_threshold must be in [0, 1], got {self.confidence_threshold}")


class _Shifted:
    """A CachedLM whose next-token logits are moved by one id (logit of x − 1 at x): the null's drafter."""

    def __init__(self, lm: CachedLM):
        self.lm = lm

    @property
    def sequences(self) -> int:
        return self.lm.sequences

    def next(self, ids: list[int]) -> torch.Tensor:
        return torch.roll(self.lm.next(ids), 1, dims=-1)


@method(family="decoding", config=Config, smoke=SMOKE,
        reference="the target drafts for itself: the upper bound of drafting, the world's positive control")
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, greedy = cpu_generator(ctx), not config.do_sample
    target = CachedLM(problem.target.model)
    drafter = CachedLM(problem.self_drafter.model)  # the same weights behind a cache of its own, counted as a drafter
    draft_lm = _Shifted(drafter) if config.shift else drafter
    eos = problem.target.tokenizer.eos_token_id

    def step(ids: list[int], remaining: int, counts: Counts) -> list[int]:
        k = min(config.num_assistant_tokens, remaining - 1)
        draft, dists = draft_tokens(draft_lm, ids, k, greedy, config.confidence_threshold, counts, generator, eos) \
            if k > 0 else ([], [])
        return verify(target, ids, draft, counts, greedy, generator,
                      q_rows=None if config.exact_match else dists)

    return decode_all(problem, step, greedy, ctx)
