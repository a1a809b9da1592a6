"""SLRS, String-Level Rejection Sampling: rejection sampling on the drafter's induced law over target tokens
(paper Algorithm 3).

Timor et al., "Accelerating LLM Inference with Lossless Speculative Decoding Algorithms for
Heterogeneous Vocabularies", ICML 2025, arXiv 2502.05202 (spec §3.2). The drafter samples tokens
d_1, d_2, … after the current text until the stopping rule S fires; the proposal is the first
target token t of the drafted string s. ψ(t) = P_{d~q}[t(s) = t] is the exact law of that proposal,
computed by enumerating every drafter token path (every segmentation) that can reach it, one drafter
forward per path prefix: the exponential cost of the paper's lemma (`drafter_calls` counts paths).
Verification is standard speculative sampling with the pair (p, ψ):

    accept t with probability min(1, p(t)/ψ(t)),  else sample t' ∝ p(t') − min(p(t'), ψ(t')),

so the output is exactly p-distributed; expected acceptance Σ_t min(p(t), ψ(t)) ≥ Σ_t ψ(t)p(t) (SLEM's).
Rounds chain k such proposals, each ψ_j conditioned on the text extended by t_1..t_{j−1}, and verify
them with one target forward pass.

Stopping rule and first token (our concrete choice; the spec leaves S open): drafting stops as soon as
s is no longer a proper prefix of any target token's string (or the drafter emits a special token),
and t(s) is the longest target token that is a prefix of s. If no target token is (s empty), the
proposal is "none", which the target always rejects.

Fidelity: reconstructed (stopping rule and first-token map chosen as above; the paper's exact S is
not in the available text). t_j is drawn from the enumerated ψ_j, which has the law of sampling the
drafter and mapping its string. Sampling only (the paper defines SLRS for sampling); no KV caches.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bench.context import RunContext
from bench.registry import method
from methods.decoding._sd import Counts, cpu_generator, decode_all, encode, probs, sample, sampling_verify, text_of
from methods.decoding.tli import output_size, token_strings
from tasks.decoding import DecodingProblem, DecodingResult

SMOKE = {"num_assistant_tokens": 1}


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

    def first_token(self, s: str) -> int:
        """The longest target token that is a prefix of s; −1 (none) if there is none."""
        for n in range(min(len(s), self.longest), 0, -1):
            if s[:n] in self.target_index:
                return self.target_index[s[:n]]
        return -1

    def table(self, w: str) -> tuple:
        """From drafted string w: (ids that end the draft, their first target token, [(id, w + str(id))] that go on)."""
        if w not in self.tables:
            end_ids, end_t, go_on = [], [], []
            for j, s in enumerate(self.d_strings):
                if s and w + s in self.prefixes:
                    go_on.append((j, w + s))
                else:
                    end_ids.append(j)
                    end_t.append(self.first_token(w + s if s else w))
            self.tables[w] = (torch.tensor(end_ids), torch.tensor(end_t), go_on)
        return self.tables[w]

    def __call__(self, context: list[int], counts: Counts) -> torch.Tensor:
        """ψ over target ids plus the 'none' mass as a last entry: (|T| + 1,) float64, sums to 1."""
        z = encode(self.problem.drafter, text_of(self.problem.target, context))  # drafter context, enc_D(dec_T(y))
        psi = torch.zeros(self.t_size + 1, dtype=torch.float64)
        frontier: list[tuple[list[int], str, float]] = [([], "", 1.0)]
        paths = 0
        while frontier:
            paths += len(frontier)
            if paths > self.config.max_paths:
                raise ValueError(f"SLRS: ψ needs more than max_paths={self.config.max_paths} drafter paths; the "
                                 "enumeration is exponential in token length (use a drafter with shorter tokens)")
            rows = []
            for start in range(0, len(frontier), self.config.batch):
                chunk = torch.tensor([z + path for path, _, _ in frontier[start: start + self.config.batch]])
                rows.append(probs(self.problem.drafter, chunk)[:, -1])  # q(·|z, path): (B, |D|)
            q_all = torch.cat(rows)
            counts.drafter_calls += len(frontier)
            nxt = []
            for (path, w, mass), q in zip(frontier, q_all):
                end_ids, end_t, go_on = self.table(w)
                psi.index_add_(0, torch.where(end_t < 0, self.t_size, end_t), mass * q[end_ids])
                nxt += [(path + [j], w2, mass * float(q[j])) for j, w2 in go_on if q[j] > 0]
            frontier = nxt
        return psi


@method(family="decoding", config=Config)
def solve(problem: DecodingProblem, config: Config, ctx: RunContext) -> DecodingResult:
    generator, psi = cpu_generator(ctx), Psi(problem, config)

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
        real = [c for c in candidates if c >= 0]
        p_rows = probs(problem.target, ids + real)[len(ids) - 1:]  # (m+1, |T|)
        counts.target_calls += 1
        accepted, emitted = sampling_verify(p_rows, dists, candidates, generator)
        counts.drafted += len(candidates)
        counts.accepted += accepted
        return emitted

    return decode_all(problem, step, False, ctx)
