"""SLRS, String-Level Rejection Sampling: rejection sampling on the drafter's induced law over target tokens
(paper Algorithm 3).

Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for
Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202, Algorithm 3. The drafter samples tokens
d_1, d_2, … after the current text until the stopping rule S fires; the proposal is the first
target token t of the drafted string s. ψ(t) = P_{d~q}[t(s) = t] is the exact law of that proposal,
computed by enumerating every drafter token path (every segmentation) that can reach it, one drafter
forward per path prefix: the exponential cost of the paper's lemma (`drafter_calls` counts paths: each row of a batched
forward).
Verification is standard speculative sampling with the pair (p, ψ):

    accept t with probability min(1, p(t)/ψ(t)),  else sample t' ∝ p(t') − min(p(t'), ψ(t')),

so the output is exactly p-distributed; expected acceptance Σ_t min(p(t), ψ(t)) ≥ Σ_t ψ(t)p(t) (SLEM's).
Rounds chain k such proposals, each ψ_j conditioned on the text extended by t_1..t_{j−1}, and verify
them with one target forward pass.

Cost: the drafter reads the context z once into its KV cache; each level of the enumeration (all
paths of d drafter tokens) is one batched forward of the paths alone over a copy of that cache, and
ψ is accumulated on tensors, one scatter per level.

Stopping rule and first token (our concrete choice; the paper, as we read it, leaves S open): drafting stops as soon as
s is no longer a proper prefix of any target token's string (or the drafter emits a special token),
and t(s) is the longest target token that is a prefix of s. If no target token is (s empty), the
proposal is "none", which the target always rejects.

Fidelity: reconstructed (stopping rule and first-token map chosen as above; the paper's exact S is
not in the available text). t_j is drawn from the enumerated ψ_j, which has the law of sampling the
drafter and mapping its string. Sampling only (the paper defines SLRS for sampling).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from methods.decoding._cache import CachedLM
from methods.decoding._sd import Counts, cpu_generator, decode_all, sample, softmax, verify
from methods.decoding._vocab import Retokenizer, output_size, token_strings
from tasks.decoding import DecodingProblem, DecodingResult

SMOKE = {"num_assistant_tokens": 1}

SWITCHED_OFF = ("the algorithm is the method: no setting replaces its exact ψ and rejection rule min(1, p/ψ) (exact "
                "matching on the same drafts is slem with do_sample, another method, not bit for bit) or removes "
                "drafting (k >= 1)")


@dataclass(frozen=True)
class Config:
    num_assistant_tokens: int = 5       # k, proposals per round (not in the available text)
    confidence_threshold: float = 0.4   # stop proposing when max ψ < this (HF's confidence rule, on ψ)
    max_paths: int = 200_000            # refuse a ψ enumeration larger than this (drafter paths per position)
    batch: int = 256                    # drafter paths per batched forward
    do_sample: bool = True              # SLRS is defined for sampling (temperature 1) only

    def __post_init__(self) -> None:
        if not self.do_sample:
            raise ValueError("do_sample=False: SLRS is defined for sampling only (use slem or tli for greedy)")
        if self.num_assistant_tokens < 1 or self.max_paths < 1 or self.batch < 1:
            raise ValueError(f"num_assistant_tokens, max_paths and batch must be >= 1, got "
                             f"{self.num_assistant_tokens}, {self.max_paths}, {self.batch}")
        if not 0.0 <= self.confidence_threshold <= 1.0:
            raise ValueError(f"confidence_threshold must be in [0, 1], got {self.confidence_threshold}")


class Psi:
    """ψ over target ids by enumerating drafter paths (the string -> transition tables are built lazily)."""

    def __init__(self, problem: DecodingProblem, config: Config):
        self.problem, self.config = problem, config
        self.t_size, d_size = output_size(problem.target), output_size(problem.drafter)
        special = set(problem.target.tokenizer.all_special_ids)
        self.target_index: dict[str, int] = {}
        for i, s in enumerate(token_strings(problem.target, self.t_size)):
            if s and i not in special and "\ufffd" not in s:
                self.target_index.setdefault(s, i)
        self.longest = max(map(len, self.target_index))
        self.prefixes = {s[:n] for s in self.target_index for n in range(len(s))}  # proper prefixes, "" included
        d_special = set(problem.drafter.tokenizer.all_special_ids)
        self.d_strings = [None if j in d_special else s for j, s in enumerate(token_strings(problem.drafter, d_size))]
        self.tables: dict[str, tuple] = {}
        self.drafter_lm = CachedLM(problem.drafter.model)
        self.to_drafter = Retokenizer(problem.target, problem.drafter)

    def first_token(self, s: str) -> int:
        """The longest target token that is a prefix of s; −1 (none) if there is none."""
        for n in range(min(len(s), self.longest), 0, -1):
            if s[:n] in self.target_index:
                return self.target_index[s[:n]]
        return -1

    def table(self, w: str) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
        """From drafted string w: (dest, go_ids, go_strings). dest[j] is the first target token of w + str(j) for
        the drafter ids j that end the draft (|T|: 'none'), |T| + 1 for the ids that go on; go_ids lists those,
        go_strings their extended strings."""
        if w not in self.tables:
            dest, go_ids, go_strings = [], [], []
            for j, s in enumerate(self.d_strings):
                if s and w + s in self.prefixes:
                    dest.append(self.t_size + 1)
                    go_ids.append(j)
                    go_strings.append(w + s)
                else:
                    t = self.first_token(w + s if s else w)
                    dest.append(self.t_size if t < 0 else t)
            self.tables[w] = (torch.tensor(dest), torch.tensor(go_ids, dtype=torch.long), go_strings)
        return self.tables[w]

    def __call__(self, context: list[int], counts: Counts) -> torch.Tensor:
        """ψ over target ids plus the 'none' mass as a last entry: (|T| + 1,) float64, sums to 1."""
        z = self.to_drafter(context)  # drafter context, enc_D(dec_T(y)), re-encoding the new text only
        psi = torch.zeros(self.t_size + 2, dtype=torch.float64)  # target ids, 'none', a discard bin
        paths, strings, mass = torch.zeros((1, 0), dtype=torch.long), [""], torch.ones(1, dtype=torch.float64)
        total, before = 0, self.drafter_lm.sequences
        while strings:
            total += len(strings)
            if total > self.config.max_paths:
                raise ValueError(f"SLRS: ψ needs more than max_paths={self.config.max_paths} drafter paths; the "
                                 "enumeration is exponential in token length (use a drafter with shorter tokens)")
            if paths.shape[1] == 0:
                q = softmax(self.drafter_lm.next(z))[None]
            else:  # q(·|z, path) for every path of this length: (F, |D|)
                q = torch.cat([softmax(self.drafter_lm.batch_last(z, paths[i: i + self.config.batch]))
                               for i in range(0, len(paths), self.config.batch)])
            counts.drafter_calls += self.drafter_lm.sequences - before  # every path of the level, one row each
            before = self.drafter_lm.sequences
            tables = [self.table(w) for w in strings]
            joint = mass[:, None] * q  # P(path, next drafter id)
            psi.index_add_(0, torch.stack([t[0] for t in tables]).flatten(), joint.flatten())
            parent = torch.repeat_interleave(torch.arange(len(strings)), torch.tensor([len(t[1]) for t in tables]))
            nxt = torch.cat([t[1] for t in tables])
            keep = joint[parent, nxt] > 0
            paths = torch.cat([paths[parent], nxt[:, None]], dim=1)[keep]
            mass = joint[parent, nxt][keep]
            strings = [w for w, k in zip((w2 for t in tables for w2 in t[2]), keep.tolist()) if k]
        return psi[:-1]


@method(family="decoding", config=Config, smoke=SMOKE)
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, psi, target = cpu_generator(ctx), Psi(problem, config), CachedLM(problem.target.model)

    def step(ids: list[int], remaining: int, counts: Counts) -> list[int]:
        candidates, dists = [], []
        for _ in range(min(config.num_assistant_tokens, remaining - 1)):
            law = psi(ids + candidates, counts)  # ψ_j(·|y, t_<j), 'none' last
            t = sample(law, generator)
            dists.append(law[:-1])
            if t == psi.t_size:  # the 'none' proposal: always rejected, nothing to draft after it
                candidates.append(-1)
                break
            candidates.append(t)
            if float(law.max()) < config.confidence_threshold:
                break
        return verify(target, ids, candidates, counts, False, generator, q_rows=dists)

    return decode_all(problem, step, False, ctx)
