"""A chat model safety fine-tuned to refuse one harmful category, evaluated on plain and jailbreak-wrapped prompts.

Pan et al., ICML 2025, arXiv 2502.09674; the CPU-scale plan of docs/papers/safety-directions.md.
Default (CPU): a tiny Llama (4 blocks, d = 64) over a BPE tokenizer with a plain chat template is
trained as the "instruct" base model (it refuses plain harmful requests and falls for
jailbreak-wrapped ones, as Llama-3.1-8B-Instruct at exposure k = 0 in §5.1), then safety fine-tuned
(SSFT: completion-only loss, cosine schedule with 10 % warm-up) on the generated analogue of
`make_dataset(k)`: k plain harmful requests and k wrapped in each jailbreak style (hypothetical
narrative, role play, compliance-priming trigger tokens), refused, and as many harmless requests,
answered. Both models are cached under the run context's `cache_dir("safety")`, keyed by every
setting that changes them and the seed. Analysis and test prompts are then drawn half harmful, styles
uniform, and labelled with each model's top next token (refused iff it is the first token of
`refusal_prefix`).

GPU / hub: `base_model` a hub id or directory of an instruct model (e.g.
meta-llama/Llama-3.1-8B-Instruct, `refusal_prefix="I"`), `finetuned_model` its safety fine-tuned
checkpoint (or empty to SSFT it here), `data` a CSV of prompts (columns prompt, harmful, style; e.g.
built from the authors' data/*.csv). Hub checkpoints are never trained or cached here.

Fidelity: reconstructed. Synthetic one-category data and a tiny model instead of StrongREJECT /
OR-Bench and Llama-3.1-8B; the Llama-Guard moderator prompt ("safe" / "unsafe") is replaced by a
refusal / compliance response; learning rates scaled to the tiny model (paper: 2e-6 for 8B).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from bench.toolkit.cache import cache_key, cached_dir
from tasks.safety import ANALYSIS, TEST, RefusalProblem, _data
from tasks.safety._lm import (
    SHAPES,
    chat_prompts,
    chat_tokenizer,
    last_token_states,
    load_causal_lm,
    tiny_causal_lm,
    train_lm,
)

SMALLEST = {"n_analysis": 48, "n_test": 48, "layers": 2, "hidden": 32, "base_steps": 120, "finetune_steps": 40,
            "exposure": 8, "base_examples": 600}  # ~3 s to train once, then cached; refuses most harmful prompts
DATA_VERSION = 1  # bump when the generated data or the training recipe changes (part of the cache key)
# The Config's former `cache_dir` default. The cache moved to the run context (a machine's cache location is no part
# of a run's identity, issue 19), but the hub path's SSFT key hashes the whole Config: this value stays in that hash
# so the entries cached before the move keep their keys and are reused, not trained again.
FORMER_CACHE_DIR = "~/.cache/icml2025-bench/safety"


@dataclass(frozen=True)
class Config:
    base_model: str = "tiny-llama"   # tiny-llama | tiny-gpt2 (trained here), hub id or directory
                                     # (Llama-3.1-8B-Instruct)
    finetuned_model: str = ""        # "" = SSFT here; or a hub id / directory of the safety fine-tuned checkpoint
    data: str = "generated"          # generated | path of a CSV (prompt, harmful, style)
    n_analysis: int = 240            # analysis prompts (paper: make_dataset(50, 0, 700) = 700)
    n_test: int = 240                # held-out prompts the metrics are computed on
    exposure: int = 40               # k, jailbreak-wrapped examples per attack type in SSFT (paper: 10 … 160)
    layers: int = 4                  # decoder blocks of the tiny model (paper: 32)
    hidden: int = 64                 # d, hidden size of the tiny model (paper: 4096)
    vocab_size: int = 512            # BPE vocabulary of the tiny tokenizer
    base_examples: int = 2000        # transcripts the tiny instruct base model is trained on
    base_steps: int = 200            # AdamW steps of the base model
    base_lr: float = 3e-3
    finetune_steps: int = 80         # SSFT steps (paper: 1 epoch)
    finetune_lr: float = 1e-3        # SSFT learning rate (paper: 2e-6 at 8B)
    batch_size: int = 32             # SSFT / base batch (paper: 12 per device)
    refusal_prefix: str = " sorry"   # first response token meaning "refuses" (paper, Instruct: "I", id 40)

    def __post_init__(self) -> None:
        for name in ("n_analysis", "n_test", "layers", "hidden", "base_examples", "base_steps", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.exposure < 0 or self.finetune_steps < 0 or self.vocab_size < 300:
            raise ValueError("exposure >= 0, finetune_steps >= 0 and vocab_size >= 300 are required")
        if not (self.base_lr > 0 and self.finetune_lr > 0) or not self.refusal_prefix:
            raise ValueError("learning rates must be > 0 and refusal_prefix non-empty")
        if self.base_model in SHAPES and self.finetuned_model:
            raise ValueError(f"finetuned_model={self.finetuned_model!r} needs a hub / directory base_model, not the "
                             f"tiny shape {self.base_model!r} (allowed tiny shapes are trained here: leave it empty)")


def _cached(root: Path, prefix: str, settings: dict, make) -> str:
    """Directory of a saved (model, tokenizer) keyed by `settings`; built by `make()` once (toolkit's `cached_dir`)."""
    def save(tmp: Path) -> None:
        model, tokenizer = make()
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)

    return str(cached_dir(root, settings, save, prefix=prefix))


def _tiny_pair(config: Config, root: Path, seed: int, device: str) -> tuple[str, str]:
    """Directories of the cached tiny base model and its SSFT version under `root` (trained on first use)."""
    base_settings = {"v": DATA_VERSION, "seed": seed, "shape": config.base_model, "layers": config.layers,
                     "hidden": config.hidden, "vocab": config.vocab_size, "examples": config.base_examples,
                     "steps": config.base_steps, "lr": config.base_lr, "batch": config.batch_size}
    ssft_settings = {"base": cache_key(base_settings), "k": config.exposure, "steps": config.finetune_steps,
                     "lr": config.finetune_lr, "batch": config.batch_size}
    data_rng, ssft_rng = (np.random.default_rng([seed, DATA_VERSION, i]) for i in (1, 2))

    def make_base():
        transcripts = _data.base_transcripts(config.base_examples, data_rng)
        tokenizer = chat_tokenizer([m + r for m, r in transcripts], config.vocab_size)
        model = tiny_causal_lm(config.base_model, tokenizer, seed, config.layers, config.hidden).to(device)
        train_lm(model, tokenizer, transcripts, config.base_steps, config.base_lr, config.batch_size, False,
                 torch.Generator().manual_seed(seed), device)
        return model, tokenizer

    base_dir = _cached(root, "base-", base_settings, make_base)
    return base_dir, _cached(root, "ssft-", ssft_settings, lambda: _finetune(base_dir, config, ssft_rng, seed, device))


def _finetune(base_dir: str, config: Config, rng: np.random.Generator, seed: int, device: str):
    """SSFT (safety SFT): the base model trained on the refusal / compliance set, loss on the response only."""
    model, tokenizer = load_causal_lm(base_dir, device)
    train_lm(model, tokenizer, _data.ssft_transcripts(config.exposure, rng), config.finetune_steps,
             config.finetune_lr, config.batch_size, True, torch.Generator().manual_seed(seed + 1), device)
    return model, tokenizer


def _prompts(config: Config, rng: np.random.Generator) -> tuple[_data.Prompts, np.ndarray]:
    if config.data != "generated":
        if not Path(config.data).expanduser().is_file():
            raise ValueError(f"data must be 'generated' or an existing CSV file, got {config.data!r}")
        prompts = _data.read_csv(config.data)
        split = np.where(rng.permutation(len(prompts.text)) < len(prompts.text) // 2, ANALYSIS, TEST)
        return prompts, split
    halves = [_data.sample(n // 2, n - n // 2, _data.STYLES, rng) for n in (config.n_analysis, config.n_test)]
    joined = _data.Prompts(halves[0].text + halves[1].text, np.concatenate([h.harmful for h in halves]),
                           np.concatenate([h.style for h in halves]), halves[0].action + halves[1].action)
    return joined, np.repeat([ANALYSIS, TEST], [config.n_analysis, config.n_test])


@task(family="safety", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> RefusalProblem:
    if config.base_model in SHAPES:
        base_dir, tuned_dir = _tiny_pair(config, ctx.cache_dir("safety"), ctx.seed, ctx.device)
    elif config.finetuned_model:
        base_dir, tuned_dir = config.base_model, config.finetuned_model
    else:
        base_dir = config.base_model
        settings = {**asdict(config), "cache_dir": FORMER_CACHE_DIR, "seed": ctx.seed}  # the key as before the move
        tuned_dir = _cached(ctx.cache_dir("safety"), "ssft-", settings,
                            lambda: _finetune(base_dir, config, np.random.default_rng([ctx.seed, 2]), ctx.seed,
                                              ctx.device))
    base, tokenizer = load_causal_lm(base_dir, ctx.device)
    tuned, _ = load_causal_lm(tuned_dir, ctx.device)
    prompts, split = _prompts(config, ctx.rng)
    refusal_token = tokenizer(config.refusal_prefix, add_special_tokens=False)["input_ids"][0]
    formatted = chat_prompts(tokenizer, prompts.text)
    _, base_top = last_token_states(base, tokenizer, formatted, device=ctx.device)
    _, tuned_top = last_token_states(tuned, tokenizer, formatted, device=ctx.device)
    return RefusalProblem(base_model=base, finetuned_model=tuned, tokenizer=tokenizer, prompts=prompts.text,
                          harmful=prompts.harmful, style=prompts.style, styles=prompts.styles, split=split,
                          refusal_token=int(refusal_token), refused=tuned_top == refusal_token,
                          base_refused=base_top == refusal_token,
                          synonyms=dict(_data.SYNONYMS) if config.data == "generated" else {}, device=ctx.device)
