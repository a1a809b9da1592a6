"""Byte-level BPE tokenizers trained here (no hub access): a generated corpus, training, save and load.

Byte-level pre-tokenisation means every string is encodable (no unknown characters), so a tiny
model built on this tokenizer can score any text, RewardBench's code and non-English rows included.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SPECIAL_TOKENS = ("<pad>", "<eos>", "<unk>")
_WORDS = ("the a an and or but if then because so that this it is are was be can will would should could not no yes "
          "i you we they he she my your our their me us them what how why when where which who please help thank "
          "sorry sure here there answer question explain write code function return value list number add sum "
          "python java rust go cpp javascript print loop error file data model reward safe unsafe harmful refuse "
          "request illegal dangerous information privacy password share cannot assist with describe paris food art "
          "romance city museum restaurant cafe river night light story poem email letter summary first second step "
          "one two three four five ten hundred math prove solve equation true false good bad better best wrong "
          "right correct incorrect human assistant user system").split()
_PUNCT = (".", ",", "?", "!", ":", "\n")


def generated_corpus(sentences: int = 2000, seed: int = 0) -> list[str]:
    """Random sentences over a small chat / code / safety vocabulary, with digits and punctuation."""
    rng = np.random.default_rng(seed)
    corpus = []
    for _ in range(sentences):
        words = rng.choice(_WORDS, size=int(rng.integers(4, 16)))
        text = " ".join(words) + str(rng.choice(_PUNCT))
        if rng.random() < 0.2:
            text += f" {int(rng.integers(0, 1000))} = {int(rng.integers(0, 1000))}"
        corpus.append(text)
    return corpus


def train_bpe_tokenizer(corpus: list[str], vocab_size: int = 512, special_tokens=SPECIAL_TOKENS):
    """A `PreTrainedTokenizerFast` with byte-level BPE trained on `corpus`; pad, eos, unk from `special_tokens`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    pad, eos, unk = special_tokens
    tok = Tokenizer(models.BPE(unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=pad, eos_token=eos, unk_token=unk)


def save_tokenizer(tokenizer, path: str | Path) -> Path:
    path = Path(path)
    tokenizer.save_pretrained(path)
    return path


def load_tokenizer(name_or_path: str | Path):
    """AutoTokenizer for a hub id or a saved directory."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(name_or_path))
