"""The base model and the judge of the erasure family, trained once and cached on disk.

* Base model: the tiny Flux transformer (tasks/erasure/_flux.py) trained with the rectified-flow
  loss ‖v_θ(x_t, t | prompt) − (ε − x0)‖², x_t = (1 − t) x0 + t ε, t logit-normal (as SD3/Flux
  train), on scikit-learn's 8 × 8 digits scaled to [−1, 1]. Prompts: a random template with a random
  synonym of the digit (English word, numeral or German word), its words shuffled with probability
  ½; with probability 0.1 the digit word is dropped (the anchor prompt "a photo of the digit": any
  digit) and with probability 0.1 the prompt is empty (classifier-free guidance).
* Judge: scikit-learn's MLPClassifier (one hidden layer of 64 ReLU units) on the same images; its
  hidden activations are the features of the Fréchet distance.

Both are cached under `<cache_dir>/<sha256 of every setting, FORMAT and the torch version>/` (the task passes the run
context's `cache_dir("erasure")`) by bench.toolkit.cache.cached_dir (written to a temporary directory and renamed into
place); a directory given as `pretrained` (or a hub id with the same layout) is loaded instead of training.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from diffusers import FluxTransformer2DModel
from sklearn.datasets import load_digits
from sklearn.neural_network import MLPClassifier

from bench.toolkit.cache import cache_key, cached_dir, numerics_keyed
from bench.toolkit.training import seeded
from tasks.erasure._flux import DIGIT_WORDS, TEMPLATES, TextEncoder, direct_attention, make_transformer, pack, velocity

FORMAT = 2  # bump when the training recipe changes: old cache entries are then ignored
# (2: entries written before TextEncoder seeded its layers' default init drew their encoder biases from the process's
# global generator, so a fresh machine trained a different base; every entry is now reproducible.)


@dataclass(frozen=True)
class BaseSettings:
    layers: int = 4            # dual-stream blocks (FLUX.1-dev: 19)
    single_layers: int = 2     # single-stream blocks (FLUX.1-dev: 38)
    heads: int = 4             # attention heads (24)
    head_dim: int = 16         # head width (128)
    train_steps: int = 700     # AdamW steps of base training
    batch_size: int = 128
    lr: float = 1e-3
    seed: int = 0              # seed of the base model and the classifier (not the run's seed)

    def cache_settings(self) -> dict:
        """Everything the cached artefact depends on: every setting, the recipe's FORMAT, the torch version."""
        return {**self.__dict__, "format": FORMAT, "torch": torch.__version__.split("+")[0]}

    def key(self) -> str:
        """The cache entry's name in this process (cached_dir keys the settings with the float numerics)."""
        return cache_key(numerics_keyed(self.cache_settings()))


def digits() -> tuple[np.ndarray, np.ndarray]:
    """(1797, 8, 8) images in [−1, 1] (16 grey levels) and their labels."""
    data = load_digits()
    return (data.images / 8.0 - 1.0).astype(np.float32), data.target


def training_prompt(label: int, rng: np.random.Generator) -> str:
    u = rng.random()
    if u < 0.1:
        return ""
    template = TEMPLATES[rng.integers(len(TEMPLATES))]
    words = template.format(DIGIT_WORDS[label][rng.integers(3)]).split()
    if u < 0.2:
        words = [w for w in words if w not in {s for group in DIGIT_WORDS for s in group}]
    if rng.random() < 0.5:
        words = list(rng.permutation(words))
    return " ".join(words)


def train_base(settings: BaseSettings, encoder: TextEncoder, log=None) -> FluxTransformer2DModel:
    rng = np.random.default_rng(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    with seeded(settings.seed, device=None):  # diffusers initialises the weights from the global generator
        transformer = make_transformer(settings.layers, settings.single_layers, settings.heads, settings.head_dim)
    images, labels = digits()
    x_all = pack(torch.from_numpy(images))
    optimiser = torch.optim.AdamW(transformer.parameters(), lr=settings.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, settings.train_steps)
    transformer.train()
    for step in range(settings.train_steps):
        idx = rng.integers(len(images), size=settings.batch_size)
        x0 = x_all[idx]
        text = encoder.encode([training_prompt(int(labels[i]), rng) for i in idx])
        noise = torch.randn(x0.shape, generator=generator)
        t = torch.sigmoid(torch.randn(len(idx), generator=generator))  # logit-normal t
        xt = (1 - t[:, None, None]) * x0 + t[:, None, None] * noise
        loss = (velocity(transformer, xt, text, t) - (noise - x0)).square().mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if log is not None and (step % 50 == 0 or step == settings.train_steps - 1):
            log(step, base_loss=float(loss.detach()))
    return transformer.eval().requires_grad_(False)


def train_classifier(seed: int) -> tuple[list[np.ndarray], float]:
    """MLP judge: (weights [W0, b0, W1, b1], held-out accuracy on a 30 % split)."""
    images, labels = digits()
    x = images.reshape(len(images), -1)
    order = np.random.default_rng(seed).permutation(len(x))
    n_train = int(0.7 * len(x))
    train, test = order[:n_train], order[n_train:]
    clf = MLPClassifier(hidden_layer_sizes=(64,), max_iter=600, random_state=seed).fit(x[train], labels[train])
    weights = [clf.coefs_[0], clf.intercepts_[0], clf.coefs_[1], clf.intercepts_[1]]
    return weights, float(clf.score(x[test], labels[test]))


def _save(directory: Path, transformer, encoder: TextEncoder, classifier, accuracy: float) -> None:
    transformer.save_pretrained(directory / "transformer")
    torch.save(encoder.state_dict(), directory / "text_encoder.pt")
    np.savez(directory / "classifier.npz", *classifier, accuracy=accuracy)


def load(directory: str | Path):
    """(transformer, text encoder, classifier weights, classifier accuracy) from a cache/pretrained dir or hub id."""
    transformer = direct_attention(FluxTransformer2DModel.from_pretrained(str(directory), subfolder="transformer"))
    root = Path(directory)
    if not root.is_dir():  # a hub id: fetch the two small files next to the transformer
        from huggingface_hub import snapshot_download
        root = Path(snapshot_download(str(directory), allow_patterns=["text_encoder.pt", "classifier.npz"]))
    encoder = TextEncoder()
    encoder.load_state_dict(torch.load(root / "text_encoder.pt", weights_only=True))
    arrays = np.load(root / "classifier.npz")
    classifier = [arrays[f"arr_{i}"] for i in range(4)]
    return (transformer.eval().requires_grad_(False), encoder.requires_grad_(False), classifier,
            float(arrays["accuracy"]))


def cached_base(settings: BaseSettings, cache_dir: str | Path, log=None):
    """Train (once) or load the base model and the judge for these settings."""
    def build(directory: Path) -> None:
        encoder = TextEncoder(settings.seed)
        transformer = train_base(settings, encoder, log)
        classifier, accuracy = train_classifier(settings.seed)
        _save(directory, transformer, encoder, classifier, accuracy)

    return load(cached_dir(cache_dir, settings.cache_settings(), build))
