"""The stochastic-facts world and its tiny pre-trained causal LM (cached), for tasks/calibration.

Vocabulary (word level, so one word is one token): <pad>, <eos>, "?", "Answer", the option letters
A B C D, one token per entity (e0, e1, …) and filler words (w0, w1, …) up to `vocab_size` tokens.
A fact is a question "e_i ? A B C D Answer" whose answer letter is drawn from the entity's own
categorical p_i (Dirichlet(α)), so a calibrated model is uncertain (stochastic facts).
Pre-training documents: facts with sampled answers (a fact's own count: none for the rare ones of sft_calibration's
long tail), a fact's pseudo-documents (one with each letter, the Dirichlet prior's pseudo-counts) and filler
sentences (so the output softmax has to place mass across the whole vocabulary, where V matters).
The pre-trained model is cached under the run context's `cache_dir("calibration")`, keyed by every setting
that changes it and the seed, written atomically (tmp dir + rename); `load_lm` reads a tiny cached model, a local
directory or a hub id through the same `from_pretrained` path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from bench.toolkit.models import from_pretrained, tiny_model
from bench.toolkit.training import multiplier, train

LETTERS = ("A", "B", "C", "D")
SPECIALS = ("<pad>", "<eos>", "?", "Answer", *LETTERS)
FILLER_LEN = 8


def vocabulary(n_entities: int, vocab_size: int) -> list[str]:
    words = [*SPECIALS, *(f"e{i}" for i in range(n_entities))]
    if vocab_size < len(words) + 1:
        raise ValueError(f"vocab_size {vocab_size} too small: needs > {len(words)} for {n_entities} entities")
    return words + [f"w{i}" for i in range(vocab_size - len(words))]


def build_tokenizer(words: list[str]):
    """A word-level PreTrainedTokenizerFast over `words` (whitespace pre-tokenisation)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<pad>")


def question_text(entity: int) -> str:
    return f"e{entity} ? {' '.join(LETTERS)} Answer"


def letter_ids(tokenizer) -> list[int]:
    """The token id of each option letter as it follows the prompt (last token of ' A', …)."""
    return [tokenizer(" " + letter, add_special_tokens=False).input_ids[-1] for letter in LETTERS]


def encode(tokenizer, texts: list[str]) -> torch.Tensor:
    ids = [tokenizer(t, add_special_tokens=False).input_ids for t in texts]
    if len({len(i) for i in ids}) != 1:
        raise ValueError("the world's sequences must all tokenise to one length")
    return torch.tensor(ids, dtype=torch.long)


def pretraining_texts(probs: np.ndarray, counts: np.ndarray | int, filler_fraction: float, n_filler_words: int,
                      rng: np.random.Generator, prior_count: int = 0) -> list[str]:
    """`counts[i]` sampled answers of fact i (an int: the same for every fact) and `prior_count` documents of each
    fact with each letter as its answer (pseudo-observations), then filler sentences."""
    counts = np.broadcast_to(np.asarray(counts, dtype=int), (len(probs),))
    texts = []
    for i, (p, n) in enumerate(zip(probs, counts)):
        answers = [*rng.choice(len(LETTERS), size=int(n), p=p), *np.repeat(np.arange(len(LETTERS)), prior_count)]
        texts += [f"{question_text(i)} {LETTERS[a]}" for a in answers]
    n_filler = int(round(len(texts) * filler_fraction / max(1e-9, 1 - filler_fraction)))
    for _ in range(n_filler):
        texts.append(" ".join(f"w{j}" for j in rng.integers(0, n_filler_words, size=FILLER_LEN)))
    return texts


def build_lm(vocab_size: int, hidden_size: int, layers: int, generator: torch.Generator):
    """A tiny LlamaForCausalLM (untied head, no dropout), initialised from `generator`'s stream."""
    from transformers import LlamaConfig

    config = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=max(1, hidden_size // 16),
                         num_key_value_heads=max(1, hidden_size // 16), max_position_embeddings=64,
                         pad_token_id=0, eos_token_id=1, bos_token_id=1, tie_word_embeddings=False)
    return tiny_model(config, int(torch.randint(2**62, (1,), generator=generator)))


def pretrain(model, tokens: torch.Tensor, steps: int, batch_size: int, lr: float, generator: torch.Generator) -> None:
    """Next-token CE on every position (the padding-free documents all have one length); AdamW."""
    def batch_loss(step: int) -> torch.Tensor:
        batch = tokens[torch.randint(len(tokens), (batch_size,), generator=generator)]
        return model(input_ids=batch, labels=batch).loss

    train(model, batch_loss, steps, lr=lr, schedule=multiplier(lambda s: min(1.0, (s + 1) / 50) * (1 - s / steps)))


def load_lm(name_or_path: str | Path):
    """(model, tokenizer) in eval mode from a local directory or a hub id (one from_pretrained path)."""
    from transformers import AutoModelForCausalLM

    model, tokenizer = from_pretrained(AutoModelForCausalLM, name_or_path, "causal LM")
    return model.eval(), tokenizer
