"""AlpacaEval 2.0: the 805 instructions against the reference outputs, raw and length-controlled win rates.

The evaluation protocol of SimpleMix and EPA: the policy answers each instruction; a judge compares the answer
with the AlpacaEval 2.0 reference output (gpt4_1106_preview's); the win rate counts ties as ½ and the
length-controlled (LC) win rate is AlpacaEval 2.0's published GLM (tasks/preference/_alpacaeval_lc.py,
`length_controlled_win_rates`): the policy's own fit of a length weight, a difficulty weight and its quality, with
the instruction difficulties γ fitted across the AlpacaEval leaderboard's models, evaluated at equal length.

Data (`data`):
* "hub": the instructions and reference outputs from `tatsu-lab/alpaca_eval` (config `alpaca_eval_gpt4_baseline`,
  split `eval`) through `datasets`;
* a local directory holding `instructions.jsonl`, or such a .jsonl file: one JSON object per line with `index`,
  `instruction`, `reference_output` (and `dataset`), the 805 instructions in AlpacaEval's order;
* a local .json file {"eval": [{instruction, output, category?, keywords?}], "train": [{prompt, chosen, rejected,
  keywords?}]} (the smoke settings' tasks/preference/data/alpacaeval_sample.json, written for this project).
`eval_limit` keeps the first n instructions, `eval_max_chars` those whose instruction and reference output
together fit in n characters: CPU-scale subsamples (a tiny model's context is 1024 tokens; the short ones are
not a random sample of AlpacaEval, so a CPU-scale number is a plumbing check, not a leaderboard figure).
LC difficulties (`lc_difficulty`): "auto" takes, with data="hub", the published γ and the gamed baselines'
annotations (`df_gamed.csv` of the hub dataset tatsu-lab/alpaca_eval, what the package itself downloads: the
published metric exactly); with a data directory holding AlpacaEval's published judge annotations
(`preferences.csv.gz`, the columns of `_alpacaeval_lc.COLUMNS`), γ fitted jointly on those models, and the gamed
baselines' rows rebuilt from their published GLM when the folder holds them (`gamed_baselines.csv.gz`,
`gamed_baselines_glm.csv`: `_alpacaeval_lc.regulariser`; without them the package's un-regularised variant);
otherwise γ = 0. "none" sets γ = 0; a path names
such a preferences.csv(.gz). γ comes from the GPT-4-turbo judge's annotations: with another judge it is a
covariate whose weight the policy's fit sets, not that judge's own difficulty.
Training data (`train_data`), the off-policy lists best first that DPO / EPA train on (EPA):
* `sample` (default, the CPU scale): the chosen / rejected pairs of tasks/preference/data/alpacaeval_sample.json;
* `uf-binarized` (the papers'): `HuggingFaceH4/ultrafeedback_binarized` (`train_prefs`) with data="hub", else the
  data file's "train" pairs: one chosen, one rejected answer per prompt (one strong negative);
* `uf-all`: `openbmb/UltraFeedback`, each instruction's 4 completions ranked by GPT-4's `overall_score`, ties
  broken by the mean fine-grained rating (`fine-grained_score`, else the mean of the annotations' four
  aspect ratings), prompts without 4 scored completions dropped: up to 3 strong negatives;
* a local .json / .jsonl file of rows in either schema ({instruction, completions: [{response, overall_score,
  fine-grained_score, annotations, ...}]} or {prompt, chosen, rejected}); tests:
  tests/fixtures/alpacaeval/ultrafeedback_all.jsonl, written here in openbmb/UltraFeedback's schema.
Judges (`judge`, and `annotator` for on-policy labels):
* `alpaca_eval`: the `alpaca_eval` package's pairwise judge `weighted_alpaca_eval_gpt4_turbo` (needs the
  package and OPENAI_API_KEY, checked when the task is built; annotations cached under the run context's
  `cache_dir("preference")`);
* `reward_model:<hub id, local dir or tiny shape>`: a local sequence-classification reward model (the toolkit's
  `load_model`); the answer wins when its reward exceeds the reference's (a tiny shape is a seeded, untrained
  model: the CPU-scale plumbing check, not a meaningful judge);
* `keywords`: deterministic, for tests: the share of an item's keywords present in the answer.
The policy `model` is a hub id or local directory (the paper's SFT models), or a tiny shape for tests.

Fidelity: faithful to the AlpacaEval 2.0 metric definitions; the LC difficulties are the published ones only
with data="hub" (offline they are re-estimated and the gamed baselines rebuilt, see _alpacaeval_lc.py: on the
leaderboard's 30 published models our LC is within 0.32 points of the published on average, 1.61 at worst).
UF-all keeps every source (H4's binarized set drops truthful_qa; EPA's filtering is unknown). Category labels come
from the data file (the SimpleMix fork labels categories with an LLM); AlpacaEval's own instructions carry none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import islice
from pathlib import Path

import numpy as np
from transformers import AutoTokenizer

from bench.context import RunContext
from bench.registry import task
from bench.toolkit.cache import cached_dir
from bench.toolkit.causal_lm import load_causal_lm
from bench.toolkit.models import TINY_SHAPES, save_model
from tasks.preference import PreferenceProblem
from tasks.preference._alpacaeval_lc import (
    find_gamed_baselines,
    fit_model,
    gamed_rows,
    instruction_difficulties,
    length_controlled_win_rates,
    read_annotations,
    regulariser,
    win_rates,
)

__all__ = ["Config", "build", "length_controlled_win_rates", "win_rates", "instruction_difficulties",
           "read_annotations"]

FIXTURE = str(Path(__file__).resolve().parent / "data" / "alpacaeval_sample.json")   # package data, written here
SMALLEST = {"data": FIXTURE, "model": "tiny-gpt2", "judge": "keywords", "annotator": "keywords", "max_new_tokens": 8}
JUDGES = ("alpaca_eval", "keywords", "reward_model:<id>")
TRAIN_DATA = ("sample", "uf-binarized", "uf-all", "<local .json/.jsonl file>")
# The papers' setting (SimpleMix's fork; EPA names its own model and train_data), which the claims files' paper-scale
# cells name explicitly: the defaults below are the CPU scale, so that `--set task.data=PATH` alone runs here.
PAPER_SETTINGS = {"model": "allenai/Llama-3.1-Tulu-3-8B-SFT", "judge": "alpaca_eval",
                  "annotator": "reward_model:Skywork/Skywork-Reward-Gemma-2-27B-v0.2", "max_new_tokens": 2048,
                  "eval_max_chars": 0, "train_data": "uf-binarized"}


@dataclass(frozen=True)
class Config:
    """The defaults are the CPU scale (a tiny policy and tiny reward-model judges, the packaged training pairs, the
    short instructions): a plumbing check that runs on a CPU. The papers' scale is PAPER_SETTINGS, set explicitly
    (the claims files do; a hub model on a CPU is refused unless `--allow-cpu`)."""

    data: str = "hub"                                          # "hub", a local instructions.jsonl (or its folder), or
                                                               # a .json
    model: str = "tiny-gpt2"                                   # π_SFT (papers: PAPER_SETTINGS, SimpleMix's base)
    judge: str = "reward_model:tiny-gpt2"                      # papers: alpaca_eval (weighted_alpaca_eval_gpt4_turbo,
                                                               # AlpacaEval 2.0's default)
    annotator: str = "reward_model:tiny-gpt2"                  # labels on-policy samples (papers: Skywork's RM)
    label_temperature: float = 1.0                             # τ: Bradley–Terry on the annotator's rewards
    max_new_tokens: int = 16                                   # papers: 2048 (SimpleMix fork)
    eval_limit: int = 0                                        # first n instructions (0: all 805)
    eval_max_chars: int = 1000                                 # only instructions with instruction + reference ≤ n
                                                               # chars (0: all; papers: 0)
    train_limit: int = 0                                       # first n training prompts (0: all)
    train_data: str = "sample"                                 # "sample" (packaged pairs), "uf-binarized" (papers),
                                                               # "uf-all" (EPA) or a local file
    lc_difficulty: str = "auto"                                # γ of the LC GLM: "auto", "none" or a
                                                               # preferences.csv(.gz)

    def __post_init__(self) -> None:
        for name in (self.judge, self.annotator):
            if name not in ("alpaca_eval", "keywords") and not name.startswith("reward_model:"):
                raise ValueError(f"judge {name!r} unknown; allowed: {', '.join(JUDGES)}")
        if self.annotator == "alpaca_eval":
            raise ValueError("annotator must be pointwise (keywords or reward_model:<id>), not alpaca_eval")
        if (self.max_new_tokens < 1 or self.eval_limit < 0 or self.train_limit < 0 or self.eval_max_chars < 0
                or not self.label_temperature > 0):
            raise ValueError("need max_new_tokens >= 1, eval_limit >= 0, eval_max_chars >= 0, train_limit >= 0, "
                             "label_temperature > 0")
        if self.train_data not in TRAIN_DATA[:3] and not self.train_data.endswith((".json", ".jsonl")):
            raise ValueError(f"train_data {self.train_data!r} unknown; allowed: {', '.join(TRAIN_DATA)}")
        if self.lc_difficulty not in ("auto", "none") and not self.lc_difficulty.endswith((".csv", ".csv.gz")):
            raise ValueError(f"lc_difficulty {self.lc_difficulty!r} unknown; "
                             "allowed: auto, none, a preferences.csv(.gz)")


def _read_json(name: str, setting: str):
    path = Path(name).expanduser()
    if not path.is_file():
        allowed = ("'hub', a local instructions.jsonl, its folder, or a .json file" if setting == "data"
                   else ", ".join(TRAIN_DATA))
        raise ValueError(f"{setting} {name!r}: no such file (allowed: {allowed})")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(path.read_text())


def _instructions_file(data: str) -> Path | None:
    """The instructions.jsonl that `data` names (the file, or a folder holding it), else None."""
    path = Path(data).expanduser()
    if path.is_dir():
        if not (path / "instructions.jsonl").is_file():
            raise ValueError(f"data {data!r}: the folder holds no instructions.jsonl")
        return path / "instructions.jsonl"
    return path if path.suffix == ".jsonl" else None


def read_instructions(path: Path) -> list[dict]:
    """AlpacaEval's instructions with their reference outputs from a .jsonl file (index, instruction,
    reference_output per line) as eval items {index, instruction, output, dataset}, in `index` order."""
    rows = _read_json(str(path), "data")
    need = ("index", "instruction", "reference_output")
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or any(k not in row for k in need):
            raise ValueError(f"data {str(path)!r} line {number}: need the fields {', '.join(need)}")
    rows = sorted(rows, key=lambda r: int(r["index"]))
    return [{"index": int(r["index"]), "instruction": r["instruction"], "output": r["reference_output"],
             **({"dataset": r["dataset"]} if r.get("dataset") else {})} for r in rows]


def _number(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None                                            # "N/A" ratings, missing scores
    return value if np.isfinite(value) else None


def fine_grained(completion: dict) -> float:
    """UltraFeedback's mean fine-grained rating: `fine-grained_score`, else the mean of the aspects' Ratings."""
    value = _number(completion.get("fine-grained_score"))
    if value is not None:
        return value
    aspects = (completion.get("annotations") or {}).values()
    ratings = [_number(a.get("Rating")) for aspect in aspects
               for a in (aspect if isinstance(aspect, list) else [aspect])]
    ratings = [r for r in ratings if r is not None]
    return float(np.mean(ratings)) if ratings else -np.inf


def rank_ultrafeedback(row: dict, k: int = 4) -> list[str] | None:
    """An openbmb/UltraFeedback row's k completions best first by (overall_score, fine-grained rating);
    None unless it has k completions that all have an overall score (ties on both keep the row's order)."""
    completions = row["completions"]
    if len(completions) != k or any(_number(c.get("overall_score")) is None for c in completions):
        return None
    order = sorted(range(k), key=lambda i: (-_number(completions[i]["overall_score"]), -fine_grained(completions[i])))
    return [completions[i]["response"] for i in order]


def _text(answer) -> str:
    return answer[-1]["content"] if isinstance(answer, list) else answer   # H4's chat-format messages


def train_item(row: dict) -> dict | None:
    """{prompt, responses (best first), category?, keywords?} from either schema (None: a dropped UF row)."""
    if "completions" in row:
        ranked = rank_ultrafeedback(row)
        prompt = row["instruction"]
    elif "chosen" in row and "rejected" in row:
        ranked, prompt = [_text(row["chosen"]), _text(row["rejected"])], row["prompt"]
    else:
        raise ValueError("a train_data row needs 'instruction' and 'completions' (openbmb/UltraFeedback) or "
                         "'prompt', 'chosen', 'rejected' (ultrafeedback_binarized)")
    if ranked is None:
        return None
    return {"prompt": prompt, "responses": ranked, **{k: row[k] for k in ("category", "keywords") if row.get(k)}}


def load_items(config: Config) -> tuple[list[dict], list[dict]]:
    """(eval items, train items) from the hub or local files; a train item's `responses` are best first."""
    trains = None
    if config.data == "hub":
        import datasets

        evals = [dict(r, index=i) for i, r in
                 enumerate(datasets.load_dataset("tatsu-lab/alpaca_eval", "alpaca_eval_gpt4_baseline", split="eval"))]
    elif _instructions_file(config.data) is not None:
        evals = read_instructions(_instructions_file(config.data))
    else:
        raw = _read_json(config.data, "data")
        if not isinstance(raw, dict) or "eval" not in raw:
            raise ValueError(f"data {config.data!r}: a .json data file holds {{'eval': [...], 'train': [...]}}")
        evals, trains = raw["eval"], raw.get("train")     # no "train": uf-binarized from the hub
    if config.train_data == "uf-all":
        import datasets

        trains = datasets.load_dataset("openbmb/UltraFeedback", split="train")
    elif config.train_data == "sample":
        trains = _read_json(FIXTURE, "train_data")["train"]
    elif config.train_data != "uf-binarized":
        trains = _read_json(config.train_data, "train_data")
        trains = trains["train"] if isinstance(trains, dict) else trains
    elif trains is None:
        import datasets

        trains = datasets.load_dataset("HuggingFaceH4/ultrafeedback_binarized", split="train_prefs")
    items = list(islice(filter(None, map(train_item, trains)), config.train_limit or None))
    if len({len(item["responses"]) for item in items}) > 1:
        raise ValueError("train_data mixes list lengths (binarized pairs and 4-completion rows): use one schema")
    if config.eval_max_chars:
        evals = [e for e in evals if len(e["instruction"]) + len(e["output"]) <= config.eval_max_chars]
    return evals[: config.eval_limit or None], items


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


def check_alpaca_eval_judge() -> None:
    """The `alpaca_eval` judge needs the package and an OpenAI key: say so in one line, before any training."""
    try:
        from alpaca_eval import constants
    except ImportError:
        raise ValueError("judge alpaca_eval needs the alpaca_eval package: "
                         "pip install 'icml2025-bench[eval]'") from None
    if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEYS")
            or Path(constants.OPENAI_CLIENT_CONFIG_PATH).is_file()):
        raise ValueError("judge alpaca_eval calls OpenAI's gpt-4-1106-preview: set OPENAI_API_KEY (or alpaca_eval's "
                         "OPENAI_CLIENT_CONFIG_PATH), or use judge=keywords or judge=reward_model:<id>")


def alpaca_eval_preferences(instructions: dict, prompts, responses, baseline,
                            caching_path: str | None = None) -> np.ndarray:
    """AlpacaEval's own pairwise judge: P(answer ≻ reference) per instruction, in [0, 1].

    The package's `weighted_alpaca_eval_gpt4_turbo` annotator: the reference is output_1, the answer output_2
    (the package shuffles the two before prompting and undoes it); its preference is 2 − P("m"), the judge's
    top-logprob probability of the first-shown identifier renormalised over {"m", "M"}, in [1, 2], and 1.5 for
    identical outputs (never sent). Annotations are cached in `caching_path` (a JSON file) and reused."""
    from alpaca_eval.annotators import PairwiseAnnotator  # optional dependency: pip install 'icml2025-bench[eval]'

    annotator = PairwiseAnnotator(annotators_config="weighted_alpaca_eval_gpt4_turbo", caching_path=caching_path)
    triples = [(instructions[p], b, r) for p, r, b in zip(prompts, responses, baseline, strict=True)]
    rows = annotator.annotate_head2head(outputs_1=[{"instruction": i, "output": b} for i, b, _ in triples],
                                        outputs_2=[{"instruction": i, "output": r} for i, _, r in triples],
                                        is_ordered=True)
    found = {(r["instruction"], r["output_1"], r["output_2"]): r["preference"] for r in rows}
    values = [found.get(t) for t in triples]
    missing = sum(v is None or not np.isfinite(float(v)) for v in values)
    if missing:
        raise ValueError(f"alpaca_eval returned no preference for {missing} of {len(values)} answers (API errors?)")
    return np.array([float(v) - 1.0 for v in values])    # AlpacaEval: 1 = reference, 2 = model


@lru_cache(maxsize=4)
def _fitted_difficulty(path: str, mtime: float):
    """(γ, gamed rows) fitted on a preferences.csv(.gz) of published annotations (cached per file version); the
    gamed baselines beside it, when there, rebuilt as the regulariser (γ then on the published scale)."""
    frame = read_annotations(path)
    gamma = instruction_difficulties(frame)
    rows = gamed_rows(frame, gamma)
    gamed = find_gamed_baselines(Path(path).parent)
    if gamed is not None and rows.empty:
        gamma, rebuilt = regulariser(gamma, gamed)
        return gamma, rebuilt[["tanh_len", "gamma", "preference"]]
    return gamma, rows


def hub_difficulty():
    """(γ, gamed rows) as the alpaca_eval package reads them: df_gamed.csv of the hub dataset tatsu-lab/alpaca_eval."""
    import pandas as pd
    from huggingface_hub import hf_hub_download

    try:
        frame = pd.read_csv(hf_hub_download(repo_id="tatsu-lab/alpaca_eval", filename="df_gamed.csv",
                                            repo_type="dataset"))
    except Exception as exc:  # offline, hub errors: one line naming the way out
        raise ValueError("lc_difficulty=auto with data=hub reads df_gamed.csv from the hub (tatsu-lab/alpaca_eval) "
                         f"and could not ({type(exc).__name__}); "
                         "set task.lc_difficulty=none or a preferences.csv.gz") from None
    gamma = frame.drop_duplicates("index").set_index("index")["instruction_difficulty"]
    gamed = pd.DataFrame({"tanh_len": np.tanh(frame["std_delta_len"]), "gamma": frame["instruction_difficulty"],
                          "preference": frame["preference"]}).dropna()
    return gamma, gamed.reset_index(drop=True)


def lc_inputs(config: Config):
    """(γ by instruction index or None, gamed-baseline rows or None) of the LC GLM, per `lc_difficulty`."""
    if config.lc_difficulty == "none":
        return None, None
    path = None if config.lc_difficulty == "auto" else Path(config.lc_difficulty).expanduser()
    if path is None and config.data == "hub":
        return hub_difficulty()
    if path is None and Path(config.data).expanduser().is_dir():
        path = Path(config.data).expanduser() / "preferences.csv.gz"
        if not path.is_file():
            return None, None
    if path is None:
        return None, None
    if not path.is_file():
        raise ValueError(f"lc_difficulty {str(path)!r}: no such file")
    return _fitted_difficulty(str(path.resolve()), path.stat().st_mtime)


def alpacaeval_lc(gamma, gamed, wins, lengths, base_lengths) -> float | None:
    """The problem's LC hook: AlpacaEval 2.0's GLM fitted on the policy's preferences, in [0, 1]; None under 5
    answers (its 5-fold cross-validation needs 5), so a tiny eval_limit stores no LC rather than failing."""
    if len(wins) < 5:
        return None
    return fit_model(wins, lengths, base_lengths, gamma, gamed)["lc_win_rate"]


def _pointwise(name: str, keywords: dict, device: str):
    if name == "keywords":
        return partial(keyword_scores, keywords)
    return partial(reward_model_scores, name.split(":", 1)[1], device)


def _rank(score_fn, temperature: float, prompt: str, responses, rng: np.random.Generator) -> np.ndarray:
    scores = score_fn([prompt] * len(responses), list(responses)) / temperature
    return np.argsort(-(scores + rng.gumbel(size=len(scores))), kind="stable")


def _policy_path(config: Config, cache_dir: Path) -> tuple[str, bool]:
    if config.model not in TINY_SHAPES:
        return config.model, False

    def build(path):
        save_model(*load_causal_lm(config.model), path)

    return str(cached_dir(cache_dir, {"alpacaeval-tiny": config.model, "version": 1}, build)), True


# version 2: LC = AlpacaEval's GLM with γ; instructions.jsonl data. 3: offline γ from the refined C grid, and the
# gamed baselines rebuilt from their published GLM regularise the offline LC
@task(family="preference", config=Config, version=3, problem=PreferenceProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> PreferenceProblem:
    if config.judge == "alpaca_eval":
        check_alpaca_eval_judge()
    evals, trains = load_items(config)
    difficulty, gamed = lc_inputs(config)
    indices = [int(e.get("index", i)) for i, e in enumerate(evals)]
    gamma = np.zeros(len(evals)) if difficulty is None else difficulty.reindex(indices).fillna(0.0).to_numpy()
    path, tiny = _policy_path(config, ctx.cache_dir("preference"))
    tokenizer = load_causal_lm(path)[1] if tiny else AutoTokenizer.from_pretrained(path)
    eval_prompts = [format_prompt(tokenizer, e["instruction"]) for e in evals]
    train_prompts = [format_prompt(tokenizer, t["prompt"]) for t in trains]
    keywords = {p: e.get("keywords") for p, e in zip(eval_prompts + train_prompts, evals + trains)}
    instructions = {p: e["instruction"] for p, e in zip(eval_prompts, evals)}
    judge = None if config.judge == "alpaca_eval" else _pointwise(config.judge, keywords, ctx.device)
    cache = str(ctx.cache_dir("preference") / "alpaca_eval_annotations.json")
    pairwise = (partial(alpaca_eval_preferences, instructions, caching_path=cache) if config.judge == "alpaca_eval"
                else None)
    return PreferenceProblem(
        sft_path=path, tiny=tiny, train_prompts=tuple(train_prompts),
        train_categories=tuple(t.get("category", "other") for t in trains),
        off_policy=tuple(tuple(t["responses"]) for t in trains),
        annotate=partial(_rank, _pointwise(config.annotator, keywords, ctx.device), config.label_temperature),
        eval_prompts=tuple(eval_prompts), eval_categories=tuple(e.get("category", "other") for e in evals),
        baseline_responses=tuple(e["output"] for e in evals), probe_prompts=(), probe_responses=(),
        judge=judge, label_temperature=config.label_temperature, max_new_tokens=config.max_new_tokens,
        pairwise_judge=pairwise, lc_win_rate=partial(alpacaeval_lc, gamma, gamed))
