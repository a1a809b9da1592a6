"""Target / drafter pairs with different vocabularies on summarisation-, code- and long-context-like prompts.

CPU world of docs/papers/hetero-vocab-sd.md: a target (GPT-2 shape, byte-level BPE), a smaller drafter with a
SentencePiece-style BPE of another size, and a smaller drafter over the target's own tokenizer, all trained on
one generated corpus (tasks/decoding/_lm.py, cached under the run context's `cache_dir("decoding")`). The
prompts follow the hf-bench templates of the paper's three datasets (CNN/DM, HumanEval, SCROLLS),
`prompts_per_kind` of each, over freshly generated documents. For a GPU user, `target`, `drafter` and
`same_drafter` take hub ids or saved directories (e.g. Mixtral-8x22B-Instruct-v0.1 with
Qwen2.5-0.5B-Instruct), loaded by `from_pretrained` in `dtype` on the run's device.

Building the problem also decodes every prompt greedily with the target alone, with its KV cache: that
continuation is the reference of the losslessness metric and its wall clock the autoregressive baseline
of `speedup`.
Fidelity: reconstructed (the paper's datasets and models replaced by a generated corpus and tiny
models; 2 warm-ups and the harmonic-mean tok/s of hf-bench replaced by one timed pass over all prompts).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import task
from tasks.decoding import DecodingProblem
from tasks.decoding._corpus import KINDS, document
from tasks.decoding._lm import build_pairs, greedy_reference, load_lm, prompt_rng

SMALLEST = {"prompts_per_kind": 1, "max_new_tokens": 4, "documents": 300, "train_steps": 40,
            "target_layers": 1, "target_width": 16, "drafter_layers": 1, "drafter_width": 8}
DTYPES = ("float32", "float64", "bfloat16", "float16")


@dataclass(frozen=True)
class Config:
    prompts_per_kind: int = 4        # prompts per style (hf-bench: 30 examples per dataset)
    max_new_tokens: int = 48         # hf-bench: 512
    target: str = ""                 # M_p: hub id or directory; "" = the locally trained target
    drafter: str = ""                # M_q (different vocabulary): hub id or directory; "" = local
    same_drafter: str = ""           # drafter over the target's vocabulary; "" = local, "none" = absent
    target_vocab: int = 512          # |T| of the local target (byte-level BPE, CPU plan: ≈ 512)
    drafter_vocab: int = 300         # |D| of the local drafter (Metaspace BPE, CPU plan: ≈ 300)
    target_layers: int = 2           # local target shape: layers / width / heads
    target_width: int = 96
    drafter_layers: int = 2          # local drafters' shape (smaller than the target)
    drafter_width: int = 48
    documents: int = 3000            # training documents of the generated corpus
    train_steps: int = 400           # AdamW steps per local model
    train_seed: int = 0
    cost_ratio: float = 0.05         # c_D / c_T of the modelled speedup (CPU plan: 0.01, 0.05, 0.2)
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.prompts_per_kind < 1 or self.max_new_tokens < 1:
            raise ValueError(f"prompts_per_kind and max_new_tokens must be >= 1, got {self.prompts_per_kind}, "
                             f"{self.max_new_tokens}")
        if min(self.target_vocab, self.drafter_vocab) < 200 or self.documents < 10 or self.train_steps < 0:
            raise ValueError("target_vocab and drafter_vocab must be >= 200 (the byte alphabet), documents >= 10, "
                             f"train_steps >= 0; got {self.target_vocab}, {self.drafter_vocab}, {self.documents}, "
                             f"{self.train_steps}")
        if min(self.target_layers, self.target_width, self.drafter_layers, self.drafter_width) < 1:
            raise ValueError("model layers and widths must be >= 1")
        if self.target_width % 4 or self.drafter_width % 4:
            raise ValueError(f"widths must be multiples of 4 (4 / 2 heads), got {self.target_width}, "
                             f"{self.drafter_width}")
        if not self.cost_ratio >= 0:
            raise ValueError(f"cost_ratio must be >= 0, got {self.cost_ratio}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} unknown; allowed: {', '.join(DTYPES)}")


def _local_dir(config: Config, ctx: RunContext) -> str:
    settings = {"documents": config.documents, "target_vocab": config.target_vocab,
                "drafter_vocab": config.drafter_vocab, "steps": config.train_steps, "seed": config.train_seed,
                "target_shape": [config.target_layers, config.target_width, 4],
                "drafter_shape": [config.drafter_layers, config.drafter_width, 2]}
    return str(build_pairs(settings, ctx.cache_dir("decoding")))


@task(family="decoding", config=Config, version=1, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> DecodingProblem:
    needs_local = not (config.target and config.drafter and config.same_drafter)
    local = _local_dir(config, ctx) if needs_local else ""
    target = load_lm(config.target or f"{local}/target", ctx.device, config.dtype)
    drafter = load_lm(config.drafter or f"{local}/drafter", ctx.device, config.dtype)
    same = None if config.same_drafter == "none" else load_lm(config.same_drafter or f"{local}/same_drafter",
                                                               ctx.device, config.dtype)
    rng = prompt_rng(ctx.seed)
    kinds = tuple(k for k in KINDS for _ in range(config.prompts_per_kind))
    prompts = tuple(document(k, rng)[0] for k in kinds)
    start = time.perf_counter()
    reference = tuple(tuple(greedy_reference(target, target.tokenizer.encode(p, add_special_tokens=False),
                                             config.max_new_tokens)) for p in prompts)
    ar_seconds = time.perf_counter() - start
    return DecodingProblem(target=target, drafter=drafter, same_drafter=same, prompts=prompts, kinds=kinds,
                           max_new_tokens=config.max_new_tokens, reference=reference, ar_seconds=ar_seconds,
                           cost_ratio=config.cost_ratio)
