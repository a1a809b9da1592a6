"""Long-Short Alignment: next-token training plus α × the Long-Short Misalignment regulariser.

Du, Huang, Wang & Wang, "Long-Short Alignment for Effective Long-Context Modeling in LLMs", ICML 2025,
arXiv 2506.11769, §4–5:

    L* = L_train + α · L_misalign,   L_misalign = mean over overlap positions of D(g_A, g_B),
    D = the symmetric KL Σ (P − Q)(log P − log Q) (default), or SCE(P, Q) = −Σ P log Q − Σ Q log P,

by the paper's efficient two-forward scheme: per batch l_extra ~ U{1..l_train/2}, documents of length
l_train + l_extra, A = x[0 : l_train] and B = x[l_extra : l_extra + l_train] (both from position id 0);
position t of A and t − l_extra of B end at the same absolute token, so both predict the same next token
from a longer (A) and a shorter (B) left context (methods/length_generalization/_lm.py). α = 0.1 is the
paper's recommended weight (0.1–0.3 works, ≥ 0.5 over-regularises). L_train is taken on A.

Fidelity: reconstructed. From secondary sources (paper note, OpenReview excerpts, analyses of the ICLR
version): SCE as the plain sum of the two cross-entropies with gradients through both branches. Its formula
is ambiguous about the entropy terms, and plain SCE is 2H(P) on identical outputs, so it also pushes entropy
down: with it, α = 1 gave a long-context NLL of 4.93 nats, worse than uniform (ln 32 = 3.47). The default is
therefore the symmetric KL, which is 0 when the two outputs agree (`divergence: sce` keeps plain SCE); the loss
averaged over every overlap position (`last_position_only` keeps only the last, as in the metric); the
exact index bookkeeping (here: pairs ending at the same absolute token, overlap l_train − l_extra positions)
and whether L_train also covers B are not in the available text. Scale: a tiny RoPE Llama trained from
scratch on the synthetic topic-Markov corpus instead of 200 steps of continued training of Llama-2-7B
(CLEX / LongQLoRA / EABF) on RedPajama-Book or PG19 at 4K–8K tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from methods.length_generalization._training import solve_lm
from tasks.length_generalization import LMProblem, LMResult

SMOKE = {"steps": 3, "batch_size": 4, "model": "micro-llama-lm", "checkpoints": 2}

# The paper's mechanism is α·L_misalign (§4–5, L* = L_train + α·L_misalign): at α = 0 solve_lm (_training.py) gets
# exactly the arguments `plain` passes it (α 0, extra fraction ½, all positions, symmetric KL), the same training bit
# for bit (tests/methods/length_generalization/test_switched_off.py).
SWITCHED_OFF = {"α = 0 (no misalignment regulariser)": ("plain", {})}


@dataclass(frozen=True)
class Config:
    alpha: float = 0.1              # α, weight of L_misalign (paper: 0.1 recommended; 0.3 best in Table 6)
    extra_fraction: float = 0.5     # l_extra ~ U{1..extra_fraction·l_train} (paper: ½; ablation [1, l_train] worse)
    last_position_only: bool = False  # the divergence at the last overlap position only (the metric's form) vs all
    divergence: str = "symmetric_kl"  # symmetric_kl (0 on aligned outputs) or sce (plain SCE, = 2H on aligned ones)
    steps: int = 600                # optimiser steps (paper: 200 steps of continued training)
    batch_size: int = 32            # documents per step
    lr: float = 3e-3                # Adam learning rate, cosine-decayed to 10%
    model: str = "tiny-llama-lm"    # a tiny RoPE shape, a local directory or a hub id (paper: Llama-2-7B)
    rope_theta: float = 10000.0     # RoPE base of the tiny shapes
    checkpoints: int = 6            # model copies along training returned for the correlations (0: none)

    def __post_init__(self) -> None:
        if self.divergence not in ("symmetric_kl", "sce"):
            raise ValueError(f"divergence must be symmetric_kl or sce, got {self.divergence!r}")
        if not self.alpha >= 0 or not 0 < self.extra_fraction <= 1:
            raise ValueError(f"need alpha >= 0 and 0 < extra_fraction <= 1; got {self.alpha}, {self.extra_fraction}")
        if self.steps < 1 or self.batch_size < 1 or not self.lr > 0 or self.checkpoints < 0 or not self.rope_theta > 0:
            raise ValueError(f"need steps >= 1, batch_size >= 1, lr > 0, checkpoints >= 0, rope_theta > 0; got "
                             f"{self.steps}, {self.batch_size}, {self.lr}, {self.checkpoints}, {self.rope_theta}")


def skip(problem, config: Config) -> str | None:
    if int(config.extra_fraction * problem.train_length) >= problem.train_length:
        return f"extra_fraction {config.extra_fraction} leaves no overlap at l_train = {problem.train_length}"
    return None


@method(family="length_generalization", config=Config, skip=skip, hardware=("cpu", "cuda"), accepts=LMProblem,
        smoke=SMOKE)
def solve(problem: LMProblem, config: Config, ctx: RunContext) -> LMResult:
    return solve_lm(problem, config, config.alpha, config.extra_fraction, config.last_position_only, ctx,
                    config.divergence)
