"""Residual-stream hooks: token relevance and trigger removal, over the task's stream reading and ablation.

Reading the stream and ablating directions from it (`stream_states`, `Ablation`, `ablation`) are the task's
(tasks/safety/_stream.py, through the contract tasks.safety): the family's score applies a method's ablation itself.
Relevance (the PLRP stand-in of docs/papers/safety-directions.md): gradient × input of the readout s = h_ℓ[last]·v with
respect to the input embeddings, summed over the embedding dimension, then over each word's tokens.
"""

from __future__ import annotations

import numpy as np
import torch

# the stream's reading and ablation are the task's (its score applies a method's ablation itself); re-exported here
from tasks.safety import Ablation as Ablation
from tasks.safety import ablation as ablation
from tasks.safety import recording as _recording
from tasks.safety import stream_modules as stream_modules
from tasks.safety import stream_states as stream_states


def token_relevance(model, tokenizer, prompt: str, layer: int, direction: np.ndarray, device: str = "cpu"):
    """(relevance (T,), offsets (T, 2)): gradient × input of h_layer[last]·v per token of `prompt`."""
    batch = tokenizer(prompt, return_tensors="pt", add_special_tokens=False, return_offsets_mapping=True)
    offsets = batch.pop("offset_mapping")[0].numpy()
    embeds = model.get_input_embeddings()(batch["input_ids"].to(device)).detach().requires_grad_(True)  # (1, T, d)
    seen: list = []
    with _recording(model, seen):
        model(inputs_embeds=embeds, attention_mask=batch["attention_mask"].to(device))
    v = torch.as_tensor(direction, dtype=embeds.dtype, device=device)
    (grad,) = torch.autograd.grad(seen[layer][0, -1] @ v, embeds)    # no parameter gradients are accumulated
    return (grad * embeds).sum(-1)[0].detach().float().cpu().numpy(), offsets


def word_relevance(model, tokenizer, formatted: str, message: str, layer: int, direction: np.ndarray,
                   device: str = "cpu") -> list[float]:
    """Relevance of each space-separated word of `message` (the user text inside `formatted`)."""
    relevance, offsets = token_relevance(model, tokenizer, formatted, layer, direction, device)
    begin = formatted.rindex(message)
    out, cursor = [], begin
    for word in message.split(" "):
        lo, hi = cursor, cursor + len(word)
        out.append(float(sum(r for r, (a, b) in zip(relevance, offsets) if a < hi and b > lo and b > a)))
        cursor = hi + 1
    return out


def rewrite(message: str, picked, synonyms: dict) -> str:
    """Replace each picked word by its synonym (punctuation kept) or delete it."""
    words = message.split(" ")
    out = []
    for i, word in enumerate(words):
        core = word.strip(".,:;!?")
        if i not in picked:
            out.append(word)
        elif core in synonyms:
            out.append(word.replace(core, synonyms[core]))
    return " ".join(out)


def eligible(message: str) -> list[int]:
    """Word positions the attack may rewrite: longer than 3 characters (the paper's token filter)."""
    return [i for i, w in enumerate(message.split(" ")) if len(w.strip(".,:;!?")) > 3]


def trigger_removal(model, tokenizer, formatted: str, message: str, layer: int, direction: np.ndarray,
                    synonyms: dict, n_words: int = 3, device: str = "cpu") -> str:
    """§3.5, one round: the `n_words` eligible words with the highest relevance to the direction rewritten."""
    relevance = word_relevance(model, tokenizer, formatted, message, layer, direction, device)
    ranked = sorted(eligible(message), key=lambda i: -relevance[i])
    return rewrite(message, set(ranked[:n_words]), synonyms)
