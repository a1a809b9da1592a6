"""Tiny causal LMs with different vocabularies, trained here on one corpus and cached; or any hub id.

Our CPU world (docs/papers/hetero-vocab-sd.md): the target uses byte-level BPE (space marker `Ġ`), the
heterogeneous drafter a SentencePiece-style Metaspace BPE (space marker `▁`) with fewer merges, so the two vocabularies
intersect only partly and tokenise the same text at different boundaries; the standard-SD drafter
is a smaller model over the target's own tokenizer. All three are GPT-2 shapes trained on the same
generated corpus (tasks/decoding/_corpus.py). `load_lm` reads a hub id or a saved directory with
`from_pretrained`, the path a GPU user takes for the paper's pairs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch

from bench.toolkit.cache import cached_dir
from bench.toolkit.models import tiny_model
from bench.toolkit.tokenizer import SPECIAL_TOKENS, train_bpe_tokenizer
from bench.toolkit.training import one_cycle, train
from tasks.decoding import LM
from tasks.decoding._corpus import alphabet, corpus

CACHE_FORMAT = 1  # bump when the training code changes what is cached


def train_metaspace_tokenizer(texts: list[str], vocab_size: int):
    """SentencePiece-style BPE: spaces become `▁`, no prefix space, every corpus character in the alphabet."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    pad, eos, unk = SPECIAL_TOKENS
    tok = Tokenizer(models.BPE(unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="never")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=[c.replace(" ", "▁") for c in alphabet()], show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=pad, eos_token=eos, unk_token=unk)


def _gpt2(vocab: int, eos: int, pad: int, layers: int, width: int, heads: int, seed: int):
    from transformers import AutoConfig

    config = AutoConfig.for_model("gpt2", vocab_size=vocab, n_positions=1024, n_embd=width, n_layer=layers,
                                  n_head=heads, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=eos,
                                  eos_token_id=eos, pad_token_id=pad)
    return tiny_model(config, seed)


def train_causal_lm(tokenizer, texts: list[str], layers: int, width: int, heads: int, steps: int, seed: int,
                    seq_len: int = 128, batch: int = 16, lr: float = 3e-3):
    """A GPT-2 shape trained by next-token cross-entropy on random windows of the token stream."""
    stream = []
    for text in texts:
        stream += tokenizer.encode(text, add_special_tokens=False) + [tokenizer.eos_token_id]
    data = torch.tensor(stream)
    model = _gpt2(len(tokenizer), tokenizer.eos_token_id, tokenizer.pad_token_id, layers, width, heads, seed)
    generator = torch.Generator().manual_seed(seed)

    def window_loss(step: int) -> torch.Tensor:
        starts = torch.randint(0, len(data) - seq_len - 1, (batch,), generator=generator)
        windows = torch.stack([data[s: s + seq_len + 1] for s in starts.tolist()])  # (B, L+1)
        return model(input_ids=windows[:, :-1], labels=windows[:, :-1]).loss

    # steps = 0: the untrained world of the claims' negative controls (its final loss is NaN)
    losses = train(model, window_loss, steps, lr=lr, schedule=one_cycle(lr, steps, pct_start=0.1))
    return model, losses[-1] if losses else float("nan")


def build_pairs(settings: dict, cache_dir: str | Path) -> Path:
    """Train (or find cached) target, drafter and same-vocabulary drafter; returns their parent directory.

    `settings`: documents, target_vocab, drafter_vocab, target_shape, drafter_shape (layers, width,
    heads), steps, seed. Written atomically by the toolkit's `cached_dir` (temporary directory, renamed).
    """
    def train_all(tmp: Path) -> None:
        texts = corpus(settings["documents"], settings["seed"])
        target_tok = train_bpe_tokenizer(texts, vocab_size=settings["target_vocab"])
        drafter_tok = train_metaspace_tokenizer(texts, settings["drafter_vocab"])
        plan = {"target": (target_tok, settings["target_shape"]), "drafter": (drafter_tok, settings["drafter_shape"]),
                "same_drafter": (target_tok, settings["drafter_shape"])}
        losses = {}
        for offset, (name, (tok, shape)) in enumerate(plan.items()):
            model, losses[name] = train_causal_lm(tok, texts, *shape, steps=settings["steps"],
                                                  seed=settings["seed"] + offset)
            model.save_pretrained(tmp / name)
            tok.save_pretrained(tmp / name)
        (tmp / "done").write_text(json.dumps({"settings": settings, "final_loss": losses}))

    return cached_dir(cache_dir, {**settings, "format": CACHE_FORMAT}, train_all, prefix="pairs-")


def load_lm(name_or_path: str, device: str = "cpu", dtype: str = "float32") -> LM:
    """A causal LM and its tokenizer from a hub id or a local directory (`from_pretrained`)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    local = Path(os.path.expanduser(name_or_path))
    source = str(local) if local.exists() else name_or_path
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype))
    except OSError as exc:
        raise ValueError(f"cannot load {name_or_path!r} (a hub id or a directory with a saved model): "
                         f"{str(exc).splitlines()[0]}") from None
    return LM(model=model.to(device).eval(), tokenizer=tokenizer, name=name_or_path)


def greedy_reference(lm: LM, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
    """The target's own greedy decoding, stopping at EOS: argmax of the logits, one new token per forward read
    against the model's KV cache (the fastest plain decoding, so the task's `speedup` is not flattered)."""
    import inspect

    from transformers import DynamicCache

    model, out = lm.model, []
    device = next(model.parameters()).device
    keyword = next(k for k in ("cache", "past_key_values") if k in inspect.signature(model.forward).parameters)
    kwargs, new = {keyword: DynamicCache(), "use_cache": True}, list(prompt_ids)
    with torch.no_grad():
        for _ in range(max_new_tokens):
            token = int(torch.argmax(model(torch.tensor([new], device=device), **kwargs).logits[0, -1]))
            out.append(token)
            new = [token]
            if token == lm.tokenizer.eos_token_id:
                break
    return out


def prompt_rng(seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, 11])
