"""Hand-built LMs with exactly known next-token laws, behind real tokenizers: exactness tests of the decoders.

Target vocabulary T = {a, b, ab, ba, bb} (BPE merges a+b, b+a, b+b), drafter vocabulary D = {a, b, aa}
(merge a+a), both with <pad> and <eos>. I = T ∩ D = {a, b, <pad>, <eos>}. Each model is a bigram table:
the next-token logits depend on the last input id only, so the law of any continuation is a product.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models
from transformers import PreTrainedTokenizerFast

from tasks.decoding import LM, DecodingProblem

TARGET_VOCAB = {"<pad>": 0, "<eos>": 1, "a": 2, "b": 3, "ab": 4, "ba": 5, "bb": 6}
TARGET_MERGES = [("a", "b"), ("b", "a"), ("b", "b")]
DRAFTER_VOCAB = {"<pad>": 0, "<eos>": 1, "a": 2, "b": 3, "aa": 4}
DRAFTER_MERGES = [("a", "a")]
PROMPT = "ab"


def tokenizer(vocab: dict, merges: list) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


class TableLM(torch.nn.Module):
    """Bigram 'LM': logits(next | ids) = table[ids[-1]]."""

    def __init__(self, table: np.ndarray):
        super().__init__()
        self.table = torch.nn.Parameter(torch.as_tensor(table, dtype=torch.float64), requires_grad=False)
        self.vocab_size = table.shape[1]

    def forward(self, input_ids: torch.Tensor):
        return SimpleNamespace(logits=self.table[input_ids])  # (B, n, |V|)


def tables(seed: int, drafter_eos: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Random bigram logits; the target never emits <pad>/<eos> (continuations have a fixed length)."""
    rng = np.random.default_rng(seed)
    target = rng.normal(0, 1.5, (7, 7))
    target[:, :2] = -np.inf
    drafter = rng.normal(0, 1.5, (5, 5))
    drafter[:, 0] = -np.inf
    drafter[:, 1] = np.log(drafter_eos)
    return target, drafter


def problem(seed: int, samples: int, horizon: int, target_table=None, drafter_table=None) -> DecodingProblem:
    t_table, d_table = tables(seed)
    target = LM(TableLM(t_table if target_table is None else target_table), tokenizer(TARGET_VOCAB, TARGET_MERGES),
                "toy-T")
    drafter = LM(TableLM(d_table if drafter_table is None else drafter_table),
                 tokenizer(DRAFTER_VOCAB, DRAFTER_MERGES), "toy-D")
    same = LM(TableLM(np.random.default_rng(seed + 1).normal(0, 1.5, (7, 7))), target.tokenizer, "toy-S")
    return DecodingProblem(target=target, drafter=drafter, same_drafter=same, prompts=(PROMPT,) * samples,
                           kinds=("summarisation",) * samples, max_new_tokens=horizon,
                           reference=((),) * samples, ar_seconds=0.0)


def exact_law(target_table: np.ndarray, horizon: int) -> dict[tuple[int, ...], float]:
    """P(t_1..t_H | prompt) = Π softmax(table)[t_{i-1}, t_i], t_0 = id of the prompt 'ab'."""
    p = torch.softmax(torch.as_tensor(target_table), dim=1).numpy()
    law = {}
    for seq in itertools.product(range(2, 7), repeat=horizon):
        prev, prob = TARGET_VOCAB[PROMPT], 1.0
        for t in seq:
            prob *= p[prev, t]
            prev = t
        law[seq] = prob
    return law
