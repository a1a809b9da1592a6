"""The README's GPU commands, each run here on saved tiny hub-format models (issue 23, item 4).

The code block of README.md's section "Language models, images and the GPU path" is read as it stands: every
`bench run` line in it is run through the CLI (tests/helpers.run_bench) with
* every hub id it names (and a default hub id of its task, such as concept_erasure's CLIP judge) replaced by a saved
  tiny model of the same format (a `save_pretrained` directory loaded by the same from_pretrained path): HUB;
* `--hardware cuda` replaced by cpu (the same code with ctx.device = "cpu");
* each setting that needs the network or a key replaced by the offline equivalent the task supports: OFFLINE;
* each paper-scale size replaced by the task's smallest value: SIZES; and the task's SMALLEST and the method's SMOKE
  settings added first (the README's own settings override them);
and must exit 0 having stored a done run. Hugging Face's offline switches are set, so a hub id or dataset that slips
through fails instead of downloading. A line the tables cannot map (a new command, a new hub setting, an unknown
option) fails its test saying what to add here. Other lines (pip, the GPU benchmark script) are listed in SETUP.

For the preference commands the semantics are also checked in-process: with `task.model` a saved directory, π_SFT is
that directory (problem.sft_path, not tiny), the baseline answers are that model's samples under the task's generator
(alpacaeval's are AlpacaEval's reference outputs, whatever the model), and every preference method's policy and
reference start from the saved weights.
"""

from __future__ import annotations

import dataclasses
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.registry import Registry
from leaderboard.claims import looks_like_hub_id
from tests.helpers import run_bench

pytestmark = pytest.mark.integration  # the `bench` command as a subprocess

ROOT = Path(__file__).resolve().parents[1]
SECTION = "### Language models, images and the GPU path"
REGISTRY = Registry.discover(plugins=False)
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
SECRETS = ("OPENAI_API_KEY", "OPENAI_API_KEYS")
PREFERENCE_TASKS = ("preference_world", "alpacaeval", "long_context_alignment")

# lines of the block that are not `bench run` commands: why each is not run here
SETUP = {
    "pip install -e '.[gpu]'": "installs Triton (the extra's packages), nothing to run",
    "python benchmarks/gpu_label_smoothed_ce.py": "needs a CUDA GPU (the Triton kernel); its torch reference is "
                                                  "tested in tests/methods/calibration",
    "pip install -e '.[eval]'": "installs lm-evaluation-harness and alpaca_eval, nothing to run",
}
# (setting, README value) -> (the offline settings used instead, why)
OFFLINE = {
    ("task.judge", "alpaca_eval"): (
        {"task.judge": "keywords"},
        "AlpacaEval's GPT-4-turbo judge calls OpenAI (OPENAI_API_KEY, the network); keywords is the task's offline "
        "deterministic judge (its SMALLEST), through the same scoring path"),
    ("task.train_data", "uf-all"): (
        {"task.train_data": "tests/fixtures/alpacaeval/ultrafeedback_all.jsonl"},
        "openbmb/UltraFeedback comes from the hub; the fixture holds rows in its schema (4 completions, ranked by "
        "overall_score as uf-all ranks them)"),
    ("task.lm_eval_tasks", "longbench-english"): (
        {"task.lm_eval_tasks": "long_context_kv", "task.lm_eval_include": "tests/fixtures/lm_eval"},
        "LongBench's data come from the hub; the fixture is a custom lm_eval task over the world's long contexts, "
        "run by the same harness hook on the trained policy"),
}
# settings whose README value is a paper-scale size: the task's SMALLEST value (else its default) instead, and why
SIZES = {
    "task.max_new_tokens": "2,048 new tokens per answer of a tiny model on a CPU take minutes; the length is no part "
                           "of the path checked",
}


# ---- saved tiny hub-format models ------------------------------------------------------------------------------

def _task_sft(task: str, out: Path, **extra) -> str:
    """The task's own tiny π_SFT at its smallest settings (untrained: sft_steps 0 where the task trains one), built in
    a private cache and copied to `out`: a save_pretrained directory whose tokenizer spells the task's world."""
    from bench.context import RunContext

    module = REGISTRY.task(task)
    config = module.Config(**{**module.spec.smallest, **extra})
    problem = module.build(config, RunContext(0, cache_root=out.parent / f"{out.name}-cache").for_task())
    shutil.copytree(problem.sft_path, out)
    return str(out)


def world_model(out: Path) -> str:
    return _task_sft("preference_world", out, sft_steps=0, sft_examples=64)


def context_model(out: Path) -> str:
    return _task_sft("long_context_alignment", out, sft_steps=0, sft_examples=30)


def alpaca_model(out: Path) -> str:
    return _task_sft("alpacaeval", out)


def flux_pipeline(out: Path) -> str:
    pytest.importorskip("diffusers")
    from tests.fixtures.erasure.tiny_flux import build_pipeline

    return str(build_pipeline(out))


def clip_judge(out: Path) -> str:
    pytest.importorskip("diffusers")
    from tests.fixtures.erasure.tiny_flux import build_judge

    return str(build_judge(out))


def _pipeline_sizes() -> dict[str, str]:
    from tests.fixtures.erasure.tiny_flux import RESOLUTION

    return {"task.resolution": str(RESOLUTION), "task.max_tokens": "12", "task.n_eval": "4", "task.n_preserve": "3",
            "task.concept_images": "4", "task.sample_steps": "4", "task.batch_size": "3", "iterations": "4"}


@dataclasses.dataclass(frozen=True)
class Tiny:
    make: Callable[[Path], str]                  # builds the saved model under the given folder, returns its path
    why: str
    sizes: Callable[[], dict[str, str]] = dict   # the settings that model needs (its resolution, lengths)
    companions: tuple[str, ...] = ()             # the task's other settings whose default hub id this path loads


# (task, setting) -> the saved tiny model that replaces the hub id the README (or the task's default) names there
HUB = {
    ("preference_world", "task.model"): Tiny(world_model, "a tiny GPT-2 over the world's BPE tokenizer"),
    ("alpacaeval", "task.model"): Tiny(alpaca_model, "a tiny GPT-2 (the task's own tiny shape, saved)"),
    ("long_context_alignment", "task.model"): Tiny(context_model, "a tiny Llama (RoPE) over the contexts' tokenizer"),
    ("concept_erasure", "task.pipeline"): Tiny(flux_pipeline, "tests/fixtures/erasure/tiny_flux.py's FluxPipeline "
                                                              "(16 pixels, T5 length 12)", _pipeline_sizes,
                                               companions=("task.judge",)),
    ("concept_erasure", "task.judge"): Tiny(clip_judge, "the task's default CLIP judge (a hub id the pipeline path "
                                                        "loads): the fixture's tiny CLIPModel"),
}


def is_hub(value: str) -> bool:
    return looks_like_hub_id(value.removeprefix("reward_model:"))


# ---- the README's block ----------------------------------------------------------------------------------------

def readme_lines() -> list[str]:
    """The logical lines (continuations joined, comments dropped) of the section's first bash block (its fence may
    carry tests/test_docs.py's skip-test marker)."""
    text = (ROOT / "README.md").read_text()
    assert SECTION in text, f"README.md has no section {SECTION!r}: update tests/test_readme_gpu_commands.py"
    block = text.split(SECTION, 1)[1].split("```bash", 1)[1].split("\n", 1)[1].split("\n```", 1)[0]
    joined = block.replace("\\\n", " ")
    return [shlex.join(shlex.split(line, comments=True)) for line in joined.splitlines()
            if shlex.split(line, comments=True)]


def _commands() -> list[str]:
    return [line for line in readme_lines() if line.startswith("bench ")]


@dataclasses.dataclass
class Mapped:
    method: str
    task: str
    readme: dict[str, str]        # the README's --set settings
    settings: dict[str, str]      # what this test runs (SMOKE, SMALLEST, then the mapped README settings)
    models: dict[str, Tiny]       # setting -> the tiny model that replaces its hub id
    reasons: list[str]


def map_command(line: str) -> Mapped:  # noqa: C901 - one branch per kind of README setting, read top to bottom
    """The README line as this test runs it; pytest.fail naming what to add when a part of it has no mapping."""
    def missing(what: str) -> None:
        pytest.fail(f"README GPU command {line!r}: {what}. Add it to tests/test_readme_gpu_commands.py "
                    "(HUB for a hub model: a saved tiny model of its format; OFFLINE for a setting that needs the "
                    "network or a key; SIZES for a paper-scale size; SETUP for a line that is not `bench run`)",
                    pytrace=False)

    words = shlex.split(line)
    if words[:2] != ["bench", "run"]:
        missing(f"{' '.join(words[:2])!r} is not `bench run`")
    method = task = None
    readme: dict[str, str] = {}
    hardware = "cpu"
    rest = iter(words[2:])
    for word in rest:
        if word in ("--method", "-m"):
            method = next(rest)
        elif word in ("--task", "-t"):
            task = next(rest)
        elif word == "--hardware":
            hardware = next(rest)
        elif word == "--set":
            key, _, value = next(rest).partition("=")
            readme[key] = value
        else:
            missing(f"the option {word!r}")
    if method is None or task is None:
        missing("no --method or --task")
    if hardware not in ("cpu", "cuda"):
        missing(f"--hardware {hardware}")
    reasons = ["--hardware cuda -> cpu: the same code with ctx.device cpu"] if hardware == "cuda" else []
    module = REGISTRY.task(task)
    settings = {k: _text(v) for k, v in REGISTRY.method(method).spec.smoke.items()}
    settings.update({f"task.{k}": _text(v) for k, v in module.spec.smallest.items()})
    models: dict[str, Tiny] = {}
    for key, value in readme.items():
        if (key, value) in OFFLINE:
            replacement, why = OFFLINE[key, value]
            settings.update(replacement)
            reasons.append(f"{key}={value} -> {replacement}: {why}")
        elif key in SIZES:
            name = key.removeprefix("task.")
            small = module.spec.smallest.get(name, REGISTRY.config_defaults("task", task)[name])
            settings[key] = _text(small)
            reasons.append(f"{key}={value} -> {small}: {SIZES[key]}")
        elif is_hub(value):
            if (task, key) not in HUB:
                missing(f"the hub id {value!r} of {key} on {task}")
            models[key] = HUB[task, key]
            reasons.append(f"{key}={value} -> saved: {HUB[task, key].why}")
        else:
            settings[key] = value
    defaults = REGISTRY.config_defaults("task", task)
    for key in [c for tiny in list(models.values()) for c in tiny.companions if c not in readme]:
        default = defaults[key.removeprefix("task.")]           # a default hub id the substituted path loads
        if is_hub(default):
            if (task, key) not in HUB:
                missing(f"the default hub id {default!r} of {key} on {task}")
            models[key] = HUB[task, key]
            reasons.append(f"{key} (default {default}) -> saved: {HUB[task, key].why}")
    for tiny in models.values():
        settings.update(tiny.sizes())
    return Mapped(method, task, readme, settings, models, reasons)


def _text(value) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _label(line: str) -> str:
    words = shlex.split(line)
    return "-".join(w for i, w in enumerate(words) if i and words[i - 1] in ("--method", "-m", "--task", "-t"))


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """Each saved tiny model built once for the module, by its HUB entry."""
    root, built = tmp_path_factory.mktemp("hub-models"), {}

    def get(tiny: Tiny) -> str:
        if tiny.make not in built:
            built[tiny.make] = tiny.make(root / tiny.make.__name__)
        return built[tiny.make]

    return get


# ---- the tests ---------------------------------------------------------------------------------------------------

def test_every_line_of_the_block_is_a_command_or_a_known_setup_step():
    lines = readme_lines()
    assert _commands(), "the README's GPU block has no `bench run` command"
    unknown = [line for line in lines if not line.startswith("bench ") and line not in SETUP]
    assert not unknown, (f"README GPU block lines {unknown} are neither `bench run` nor in SETUP: add each to SETUP "
                         "in tests/test_readme_gpu_commands.py with why it is not run here, or make it a bench run")


@pytest.mark.parametrize("line", _commands(), ids=_label)
def test_the_readme_gpu_command_runs_on_saved_tiny_models(line, tmp_path, tiny_models):
    mapped = map_command(line)
    if mapped.task == "long_context_alignment" and "task.lm_eval_tasks" in mapped.readme:
        pytest.importorskip("lm_eval")
    paths = {key: tiny_models(tiny) for key, tiny in mapped.models.items()}
    settings = {**mapped.settings, **{key: path for key, path in paths.items()}}
    flags = [x for key, value in settings.items() for x in ("--set", f"{key}={value}")]
    db = tmp_path / "gpu.db"
    run = run_bench("run", "--method", mapped.method, "--task", mapped.task, "--hardware", "cpu", *flags, db=db,
                    cwd=ROOT, env={**OFFLINE_ENV, "BENCH_CACHE_DIR": str(tmp_path / "cache")}, unset=SECRETS,
                    timeout=600)
    assert run.returncode == 0, (f"{line}\nran as: {shlex.join(flags)}\nsubstitutions: {mapped.reasons}\n"
                                 f"{run.stderr[-3000:]}")
    from bench.store import Store

    (row,) = Store.open(f"sqlite:///{db}").runs(method=mapped.method, task=mapped.task)
    assert row.status == "done", row.error
    for key, path in paths.items():                                   # the run used the saved directory there
        assert row.task_config[key.removeprefix("task.")] == path
    if mapped.task in PREFERENCE_TASKS:
        assert "model" not in row.method_config and row.task_config["model"] == paths["task.model"]


def test_a_bare_model_setting_is_refused_naming_the_task_key(tmp_path):
    """The README's former first line (`--set model=<hub id>`, which moved the policy alone) is one line, exit 2."""
    run = run_bench("run", "--method", "simplemix", "--task", "preference_world", "--set",
                    "model=Qwen/Qwen2.5-1.5B-Instruct", "--hardware", "cuda", db=tmp_path / "b.db", cwd=ROOT,
                    env=OFFLINE_ENV)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("error: unknown config key 'model' for simplemix; valid keys: ")
    assert run.stderr.rstrip().endswith("the task preference_world has it: --set task.model=Qwen/Qwen2.5-1.5B-Instruct")


# ---- the semantics of task.model, in-process ---------------------------------------------------------------------

def _weights(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _same_weights(a: dict, b: dict) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("task", PREFERENCE_TASKS)
def test_task_model_is_the_sft_policy_the_reference_and_the_baseline(task, tmp_path, tiny_models, monkeypatch):
    """π_SFT = the saved directory: sft_path, not tiny; the baseline is its samples under the task's generator (on
    alpacaeval: the reference outputs, whatever the model); every preference method's policy and reference are loaded
    from it and start at its weights; the learning rate is the paper's."""
    from bench.context import RunContext
    from bench.toolkit.causal_lm import load_causal_lm, sample
    from methods.preference import _common

    path = tiny_models(HUB[task, "task.model"])
    module = REGISTRY.task(task)
    config = module.Config(**{**module.spec.smallest, "model": path})
    context = RunContext(0, cache_root=tmp_path / "cache")
    problem = module.build(config, context.for_task())
    assert problem.sft_path == path and problem.tiny is False
    saved, tokenizer = load_causal_lm(path)
    if task == "alpacaeval":
        default = module.build(module.Config(**module.spec.smallest), context.for_task())
        assert problem.baseline_responses == default.baseline_responses           # AlpacaEval's reference outputs
        assert problem.eval_prompts == default.eval_prompts                         # no chat template: the same
    else:
        expected = sample(saved, tokenizer, list(problem.eval_prompts), max_new_tokens=problem.max_new_tokens,
                          generator=context.for_task().torch_generator)
        assert problem.baseline_responses == tuple(t.strip() for t in expected)

    reference = _weights(saved)
    loads = []

    def recording(name, *args, **kwargs):
        model, tok = load_causal_lm(name, *args, **kwargs)
        loads.append((name, _weights(model)))
        return model, tok

    monkeypatch.setattr(_common, "load_causal_lm", recording)
    methods = [m for m in REGISTRY.names("method") if REGISTRY.listing("method", m).family == "preference"
               and REGISTRY.incompatibility(m, task) is None]
    assert methods
    for name in methods:
        method = REGISTRY.method(name)
        method_config = method.Config(**method.spec.smoke)
        assert not hasattr(method_config, "model")                                  # π_SFT is the task's alone
        assert _common.learning_rate(problem, method_config) == (method_config.lr or _common.PAPER_LR)
        assert _common.learning_rate(dataclasses.replace(problem, tiny=True), method_config) == \
            (method_config.lr or _common.TINY_LR)
        policy, ref, _ = _common.load_models(problem, RunContext(0))
        assert _same_weights(_weights(policy), reference) and _same_weights(_weights(ref), reference)
        assert not any(p.requires_grad for p in ref.parameters())                   # the reference is frozen
    assert [name for name, _ in loads] == [path] * 2 * len(methods)
    loads.clear()
    if task == "preference_world":                                 # one method end to end: both loads are π_SFT's
        from methods.preference import simplemix

        result = simplemix.solve(problem, simplemix.Config(**simplemix.SMOKE), RunContext(0))
        assert [name for name, _ in loads] == [path, path]
        assert all(_same_weights(weights, reference) for _, weights in loads)
        assert result.declared == {"beta": simplemix.Config().beta}
