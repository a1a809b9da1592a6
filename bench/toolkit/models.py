"""Tiny GPT-2 / Llama shapes, loading any hub id or local directory, and batched reward scoring.

`load_model(name_or_path, kind, device)` returns (model, tokenizer):
* a tiny shape name (`tiny-gpt2`, `tiny-llama`): a freshly initialised model (seeded, without
  touching the global torch RNG) over a BPE tokenizer trained on the generated corpus;
* a local directory: `from_pretrained(..., local_files_only=True)`;
* anything else: a Hugging Face hub id; if it cannot be reached the error is one line.
Only `kind="sequence-classification"` (one output logit: the reward) is built so far; the toolkit
is meant to grow causal-LM kinds beside it. `train_reward_model` fine-tunes such a model on
(chosen, rejected) texts with the Bradley–Terry loss −log σ(r(chosen) − r(rejected)) (what TRL's
RewardTrainer minimises); `save_model` writes it where `load_model` (and so a RewardBench run) reads it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from bench.toolkit.tokenizer import generated_corpus, train_bpe_tokenizer
from bench.toolkit.training import seeded, train

TINY_SHAPES = {
    "tiny-gpt2": {"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 32, "n_positions": 1024,
                  "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0},                # no dropout: deterministic
    "tiny-llama": {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
                   "hidden_size": 32, "intermediate_size": 64, "max_position_embeddings": 1024},
}
KINDS = ("sequence-classification",)
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _auto_class(kind: str):
    from transformers import AutoModelForSequenceClassification

    if kind not in KINDS:
        raise ValueError(f"model kind {kind!r} unknown; allowed: {', '.join(KINDS)}")
    return AutoModelForSequenceClassification


def tiny_config(name: str, vocab_size: int, pad_token_id: int, eos_token_id: int, num_labels: int = 1):
    """The transformers config of a tiny shape."""
    from transformers import AutoConfig

    if name not in TINY_SHAPES:
        raise ValueError(f"tiny shape {name!r} unknown; allowed: {', '.join(TINY_SHAPES)}")
    shape = dict(TINY_SHAPES[name])
    return AutoConfig.for_model(shape.pop("model_type"), vocab_size=vocab_size, pad_token_id=pad_token_id,
                                eos_token_id=eos_token_id, bos_token_id=eos_token_id, num_labels=num_labels, **shape)


def tiny_model(config, seed: int, auto_class=None):
    """The one builder of every freshly initialised tiny model (GPT-2, Llama, any transformers shape): `auto_class`
    (a causal LM by default) from `config`, its weights drawn from `seed`, the global torch RNG left as it was."""
    if auto_class is None:
        from transformers import AutoModelForCausalLM as auto_class
    with seeded(seed):  # transformers initialises weights from the global RNG
        return auto_class.from_config(config)


def build_tiny(name: str, kind: str = "sequence-classification", seed: int = 0, vocab_size: int = 512):
    """(model, tokenizer): a randomly initialised tiny model; the global torch RNG is left as it was."""
    tokenizer = train_bpe_tokenizer(generated_corpus(seed=seed), vocab_size=vocab_size)
    config = tiny_config(name, len(tokenizer), tokenizer.pad_token_id, tokenizer.eos_token_id)
    return tiny_model(config, seed, _auto_class(kind)), tokenizer


def from_pretrained(auto_class, name_or_path: str | Path, what: str = "model", with_tokenizer: bool = True,
                    hint: str = "", **kwargs):
    """(model, tokenizer or None) through `auto_class.from_pretrained` from a local directory (offline) or a
    hub id, with the tokenizer beside it; any failure is one ValueError line naming what was tried."""
    from transformers import AutoTokenizer

    local = Path(name_or_path).expanduser().is_dir()
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(name_or_path), local_files_only=local) if with_tokenizer else None
        model = auto_class.from_pretrained(str(name_or_path), local_files_only=local, **kwargs)
    except (OSError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        where = "local directory" if local else "Hugging Face hub id (no local directory of that name)"
        raise ValueError(f"cannot load {what} {str(name_or_path)!r} as a {where}{hint}: {first}") from None
    return model, tokenizer


def load_model(name_or_path: str, kind: str = "sequence-classification", device: str = "cpu",
               dtype: str = "float32", seed: int = 0):
    """(model, tokenizer) in eval mode on `device`, with a pad token (the eos token when it has none)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} unknown; allowed: {', '.join(DTYPES)}")
    if name_or_path in TINY_SHAPES:
        model, tokenizer = build_tiny(name_or_path, kind, seed)
    else:
        model, tokenizer = from_pretrained(_auto_class(kind), name_or_path, "model", dtype=DTYPES[dtype])
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    return model.to(device=device, dtype=DTYPES[dtype]).eval(), tokenizer


def save_model(model, tokenizer, path: str | Path) -> Path:
    path = Path(path)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def score_texts(model, tokenizer, texts: list[str], batch_size: int = 8, max_length: int = 2048,
                device: str = "cpu") -> np.ndarray:
    """(n,) the first logit of each text (the reward), in batches, right-padded and truncated."""
    tokenizer.padding_side = "right"  # sequence classifiers read the last non-pad token
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(list(texts[start:start + batch_size]), return_tensors="pt", padding=True,
                              truncation=True, max_length=max_length, return_token_type_ids=False)
            logits = model(**{k: v.to(device) for k, v in batch.items()}).logits     # (B, num_labels)
            out.append(logits[:, 0].float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def train_reward_model(model, tokenizer, chosen: list[str], rejected: list[str], steps: int = 100, lr: float = 1e-3,
                       batch_size: int = 8, max_length: int = 512, device: str = "cpu", generator=None,
                       weight_decay: float = 0.0) -> list[float]:
    """AdamW on the mean BT loss over random minibatches of pairs; returns the loss of every step.

    Minibatches are drawn with `generator` (a torch.Generator on the CPU; ctx.torch_generator in a
    method), and dropout (if the model has any) runs on a forked global RNG seeded from it, so a run is
    reproducible and the caller's global RNG is left as it was. The model is left in eval mode.
    """
    if len(chosen) != len(rejected) or not chosen:
        raise ValueError(f"need as many chosen as rejected texts (> 0), got {len(chosen)} and {len(rejected)}")
    tokenizer.padding_side = "right"
    seed = int(torch.randint(2**62, (1,), generator=generator))

    def bt_loss(step: int) -> torch.Tensor:
        """The mean BT loss −log σ(r_c − r_r) of a minibatch of pairs drawn with replacement."""
        idx = torch.randint(len(chosen), (min(batch_size, len(chosen)),), generator=generator).tolist()
        texts = [chosen[i] for i in idx] + [rejected[i] for i in idx]
        batch = tokenizer(texts, return_tensors="pt", padding=True, truncation=True, max_length=max_length,
                          return_token_type_ids=False)
        reward = model(**{k: v.to(device) for k, v in batch.items()}).logits[:, 0].float()   # (2B,)
        return torch.nn.functional.softplus(reward[len(idx):] - reward[: len(idx)]).mean()

    with seeded(seed, device):
        return train(model, bt_loss, steps, lr=lr, weight_decay=weight_decay)
