"""A sequence-classification reward model (hub id, local directory or tiny shape) scoring RewardBench triples.

The evaluation of RuleAdapter's reward model RAMO (Li et al., ICML 2025, arXiv 2501.15453; the
released pipeline runs allenai/reward-bench `scripts/run_rm.py --batch_size=8`): each response is
formatted with its prompt as a one-turn conversation, scored by the model's single output logit
(the pipeline's `function_to_apply="none"`), in batches on ctx.device. Formatting as the official
`load_eval_dataset`: the tokenizer's chat template when it has one ([user, assistant] messages);
otherwise (`chat_template="plain"`, or "auto" without a template) "Human: {prompt}\\n\\nAssistant:
{response}" followed by the eos token, the RuleAdapter code's reward-model format, standing in for
the FastChat template the official script falls back to (it appends eos too).
`model` defaults to the paper's released HFXM/RAMO-Llama3.1-8B (Skywork-Reward-Llama-3.1-8B-v0.2
fine-tuned on 1K rule-labelled pairs); `tiny-gpt2` / `tiny-llama` build an untrained tiny model
(the random-reward-model row of a leaderboard, and the offline smoke test). A reward model trained
here (`bench.toolkit.models.train_reward_model`, Bradley–Terry loss, then `save_model`) is evaluated
by passing its directory as `model`.

Fidelity: faithful to the official scoring loop. Deviations: no FastChat templates (the paper's
`--chat_template=Ziya` only applies to tokenizers without a template, which RAMO's Llama-3.1 tokenizer
is not); no accelerate / multi-GPU sharding; dtype bfloat16 on cuda and float32 on cpu by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from tasks.reward_learning import RewardBenchProblem, RewardBenchResult

SMOKE = {"model": "tiny-gpt2", "batch_size": 16}
TEMPLATES = ("auto", "tokenizer", "plain")
DTYPES = ("auto", "float32", "bfloat16", "float16")


# The paper's rule-labelled fine-tuning off: RAMO is Skywork-Reward-Llama-3.1-8B-v0.2 fine-tuned on 1K rule-labelled
# pairs; the same scoring of its starting checkpoint has none of it (the cell rewardbench-safety-ramo-above-its-base
# compares RAMO with)
SWITCHED_OFF = {"base checkpoint (no rule-labelled fine-tuning)": {"model": "Skywork/Skywork-Reward-Llama-3.1-8B-v0.2"}}


@dataclass(frozen=True)
class Config:
    model: str = "HFXM/RAMO-Llama3.1-8B"   # the reward model: hub id, local directory, or tiny-gpt2 / tiny-llama
    batch_size: int = 8                     # responses per forward pass (the paper's run: 8)
    max_length: int = 2048                  # truncation of prompt + response, tokens (run_rm.py default)
    chat_template: str = "auto"             # auto | tokenizer | plain
    dtype: str = "auto"                     # auto (bfloat16 on cuda, float32 on cpu) | float32 | bfloat16 | float16

    def __post_init__(self) -> None:
        if self.chat_template not in TEMPLATES:
            raise ValueError(f"chat_template {self.chat_template!r} unknown; allowed: {', '.join(TEMPLATES)}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} unknown; allowed: {', '.join(DTYPES)}")
        if self.batch_size < 1 or self.max_length < 8 or not self.model:
            raise ValueError("batch_size must be >= 1, max_length >= 8 and model non-empty")


def format_texts(tokenizer, prompts, responses, chat_template: str) -> list[str]:
    """Prompt + response as the reward model reads it (see the module docstring)."""
    has_template = getattr(tokenizer, "chat_template", None) is not None
    if chat_template == "tokenizer" and not has_template:
        raise ValueError("chat_template='tokenizer' but the tokenizer has no chat template; use 'plain' or 'auto'")
    if chat_template != "plain" and has_template:
        return [tokenizer.apply_chat_template([{"role": "user", "content": p}, {"role": "assistant", "content": r}],
                                              tokenize=False) for p, r in zip(prompts, responses)]
    eos = tokenizer.eos_token or ""
    return [f"Human: {p}\n\nAssistant: {r}{eos}" for p, r in zip(prompts, responses)]


@method(family="reward_learning", config=Config, accepts=RewardBenchProblem, hardware=("cpu", "cuda"), smoke=SMOKE)
def solve(problem: RewardBenchProblem, config: Config, ctx: RunContext) -> RewardBenchResult:
    from bench.toolkit.models import load_model, score_texts

    dtype = config.dtype if config.dtype != "auto" else ("bfloat16" if ctx.device.startswith("cuda") else "float32")
    model, tokenizer = load_model(config.model, "sequence-classification", ctx.device, dtype, seed=ctx.seed)
    scores = []
    for responses in (problem.chosen, problem.rejected):
        texts = format_texts(tokenizer, problem.prompts, responses, config.chat_template)
        scores.append(score_texts(model, tokenizer, texts, config.batch_size, config.max_length, ctx.device))
        ctx.progress(len(scores) / 2)
    return RewardBenchResult(scores_chosen=np.asarray(scores[0]), scores_rejected=np.asarray(scores[1]))
