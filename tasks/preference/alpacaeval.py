"""AlpacaEval 2.0: the 805 instructions against the reference outputs, raw and length-controlled win rates.

The evaluation protocol of SimpleMix and EPA (spec shared/papers/simplemix.md §5, epa.md §5): the policy
answers each instruction; a judge compares the answer with the reference output; the win rate counts ties
as ½ and the length-controlled win rate is the AlpacaEval 2.0 GLM (tasks/preference/__init__.py).

Data (`data`): "hub" loads the instructions and reference outputs from `tatsu-lab/alpaca_eval` (config
`alpaca_eval_gpt4_baseline`, split `eval`) and the training pairs from `HuggingFaceH4/ultrafeedback_binarized`
(`train_prefs`) through `datasets`; a path loads a local JSON file {"eval": [{instruction, output, category?,
keywords?}], "train": [{prompt, chosen, rejected, keywords?}]} (tests: tests/fixtures/alpacaeval/fixture.json,
written for this project). Judges (`judge`, and `annotator` for on-policy labels):
* `alpaca_eval`: the `alpaca_eval` package's pairwise judge `weighted_alpaca_eval_gpt4_turbo` (needs the
  package and an OpenAI key in its usual environment variable);
* `reward_model:<hub id or local dir>`: a local sequence-classification reward model (the toolkit's
  `load_model`); the answer wins when its reward exceeds the reference's;
* `keywords`: deterministic, for tests: the share of an item's keywords present in the answer.
The policy `model` is a hub id or local directory (the paper's SFT models), or a tiny shape for tests.

Fidelity: faithful to the AlpacaEval 2.0 metric definitions except the instruction-difficulty term of the
LC GLM (needs the leaderboard's other models); category labels come from the data file (the SimpleMix
fork labels categories with an LLM).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from transformers import AutoTokenizer

from bench.context import RunContext
from bench.registry import task
from bench.toolkit.causal_lm import cached_dir, load_causal_lm
from bench.toolkit.models import TINY_SHAPES, save_model
from tasks.preference import PreferenceProblem

FIXTURE = str(Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "alpacaeval" / "fixture.json")
SMALLEST = {"data": FIXTURE, "model": "tiny-gpt2", "judge": "keywords", "annotator": "keywords", "max_new_tokens": 8}
JUDGES = ("alpaca_eval", "keywords", "reward_model:<id>")


@dataclass(frozen=True)
class Config:
    data: str = "hub"                                          # "hub" or a local JSON file
    model: str = "allenai/Llama-3.1-Tulu-3-8B-SFT"             # π_SFT (SimpleMix's base; fork [F])
    judge: str = "alpaca_eval"                                 # weighted_alpaca_eval_gpt4_turbo (AlpacaEval 2.0 default)
    annotator: str = "reward_model:Skywork/Skywork-Reward-Gemma-2-27B-v0.2"  # labels on-policy samples (fork [F])
    label_temperature: float = 1.0                             # τ: Bradley–Terry on the annotator's rewards
    max_new_tokens: int = 2048                                 # SimpleMix fork: max 2048 new tokens
    eval_limit: int = 0                                        # first n instructions (0: all 805)
    train_limit: int = 0                                       # first n training pairs (0: all)
    cache_dir: str = "~/.cache/icml2025-bench/preference"

    def __post_init__(self) -> None:
        for name in (self.judge, self.annotator):
            if name not in ("alpaca_eval", "keywords") and not name.startswith("reward_model:"):
                raise ValueError(f"judge {name!r} unknown; allowed: {', '.join(JUDGES)}")
        if self.annotator == "alpaca_eval":
            raise ValueError("annotator must be pointwise (keywords or reward_model:<id>), not alpaca_eval")
        if self.max_new_tokens < 1 or self.eval_limit < 0 or self.train_limit < 0 or not self.label_temperature > 0:
            raise ValueError("need max_new_tokens >= 1, eval_limit >= 0, train_limit >= 0, label_temperature > 0")


def load_items(config: Config) -> tuple[list[dict], list[dict]]:
    """(eval items, train items) from the hub or a local JSON file."""
    if config.data != "hub":
        path = Path(config.data).expanduser()
        if not path.is_file():
            raise ValueError(f"data {config.data!r}: no such file (allowed: 'hub' or a local JSON file)")
        raw = json.loads(path.read_text())
        evals, trains = raw["eval"], raw["train"]
    else:
        import datasets

        evals = [dict(r) for r in datasets.load_dataset("tatsu-lab/alpaca_eval", "alpaca_eval_gpt4_baseline", split="eval")]
        uf = datasets.load_dataset("HuggingFaceH4/ultrafeedback_binarized", split="train_prefs")
        trains = [{"prompt": r["prompt"], "chosen": r["chosen"][-1]["content"], "rejected": r["rejected"][-1]["content"]}
                  for r in uf]
    return evals[: config.eval_limit or None], trains[: config.train_limit or None]


def format_prompt(tokenizer, instruction: str) -> str:
    """The model's chat template when it has one, else the instruction and a newline."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template([{"role": "user", "content": instruction}], tokenize=False,
                                             add_generation_prompt=True)
    return instruction + "\n"


def keyword_scores(keywords: dict, prompts, responses) -> np.ndarray:
    """The deterministic judge: share of the prompt's keywords (case-insensitive) found in the answer."""
    out = []
    for prompt, response in zip(prompts, responses, strict=True):
        words = keywords.get(prompt) or []
        out.append(np.mean([w.lower() in response.lower() for w in words]) if words else 0.0)
    return np.array(out, dtype=float)


def reward_model_scores(name: str, device: str, prompts, responses) -> np.ndarray:
    from bench.toolkit.models import load_model, score_texts

    model, tokenizer = load_model(name, device=device)
    return score_texts(model, tokenizer, [p + r for p, r in zip(prompts, responses)], device=device)


def alpaca_eval_preferences(instructions: dict, prompts, responses, baseline) -> np.ndarray:
    """AlpacaEval's own pairwise judge: P(answer ≻ reference) per instruction, in [0, 1]."""
    from alpaca_eval.annotators import PairwiseAnnotator  # optional dependency: pip install alpaca-eval

    annotator = PairwiseAnnotator(annotators_config="weighted_alpaca_eval_gpt4_turbo")
    rows = annotator.annotate_head2head(
        outputs_1=[{"instruction": instructions[p], "output": b} for p, b in zip(prompts, baseline)],
        outputs_2=[{"instruction": instructions[p], "output": r} for p, r in zip(prompts, responses)])
    return np.array([float(r["preference"]) - 1.0 for r in rows])    # AlpacaEval: 1 = reference, 2 = model


def _pointwise(name: str, keywords: dict, device: str):
    if name == "keywords":
        return partial(keyword_scores, keywords)
    return partial(reward_model_scores, name.split(":", 1)[1], device)


def _rank(score_fn, temperature: float, prompt: str, responses, rng: np.random.Generator) -> np.ndarray:
    scores = score_fn([prompt] * len(responses), list(responses)) / temperature
    return np.argsort(-(scores + rng.gumbel(size=len(scores))), kind="stable")


def _policy_path(config: Config) -> tuple[str, bool]:
    if config.model not in TINY_SHAPES:
        return config.model, False

    def build(path):
        save_model(*load_causal_lm(config.model), path)

    return str(cached_dir(config.cache_dir, {"alpacaeval-tiny": config.model, "version": 1}, build)), True


@task(family="preference", config=Config, version=1)
def build(config: Config, ctx: RunContext) -> PreferenceProblem:
    evals, trains = load_items(config)
    path, tiny = _policy_path(config)
    tokenizer = load_causal_lm(path)[1] if tiny else AutoTokenizer.from_pretrained(path)
    eval_prompts = [format_prompt(tokenizer, e["instruction"]) for e in evals]
    train_prompts = [format_prompt(tokenizer, t["prompt"]) for t in trains]
    keywords = {p: e.get("keywords") for p, e in zip(eval_prompts + train_prompts, evals + trains)}
    instructions = {p: e["instruction"] for p, e in zip(eval_prompts, evals)}
    judge = None if config.judge == "alpaca_eval" else _pointwise(config.judge, keywords, ctx.device)
    pairwise = partial(alpaca_eval_preferences, instructions) if config.judge == "alpaca_eval" else None
    return PreferenceProblem(
        sft_path=path, tiny=tiny, train_prompts=tuple(train_prompts),
        train_categories=tuple(t.get("category", "other") for t in trains),
        off_policy=tuple((t["chosen"], t["rejected"]) for t in trains),
        annotate=partial(_rank, _pointwise(config.annotator, keywords, ctx.device), config.label_temperature),
        eval_prompts=tuple(eval_prompts), eval_categories=tuple(e.get("category", "other") for e in evals),
        baseline_responses=tuple(e["output"] for e in evals), probe_prompts=(), probe_responses=(),
        judge=judge, label_temperature=config.label_temperature, max_new_tokens=config.max_new_tokens,
        pairwise_judge=pairwise)
