"""The AlpacaEval task on the project's fixture: data plumbing, the deterministic judge, win rates by hand."""

from pathlib import Path

import numpy as np
import pytest

from bench.context import RunContext
from tasks.preference import PreferenceResult, alpacaeval, score


@pytest.fixture(scope="module")
def problem():
    return alpacaeval.build(alpacaeval.Config(**alpacaeval.SMALLEST), RunContext(seed=0).for_task())


def test_fixture_is_loaded_as_instructions_references_and_pairs(problem):
    assert len(problem.eval_prompts) == 8 and len(problem.train_prompts) == 8
    assert problem.eval_prompts[0] == "What is 17 plus 25?\n"          # no chat template on the tiny tokenizer
    assert problem.baseline_responses[0] == "17 plus 25 is 42."
    assert problem.off_policy[0] == ("3 plus 4 is 7.", "It is 8.")
    assert problem.eval_categories == (("math",) * 2 + ("coding",) * 2 + ("creative_writing",) * 2
                                       + ("recommendations",) * 2)


def test_keyword_judge_and_win_rates_by_hand(problem):
    """Answers equal to the reference on the first four items (ties: ½ each), empty on the last four (losses)."""
    refs = problem.baseline_responses
    np.testing.assert_allclose(problem.judge(problem.eval_prompts[:3], ["42", "seventy-two", "def f(x): return x * x"]),
                               [1.0, 0.0, 1.0])
    responses = tuple(refs[:4]) + ("",) * 4
    zeros = np.zeros(8)
    s = score(problem, PreferenceResult(responses=responses, logp_policy=zeros, logp_ref=zeros))
    assert s["win_rate"] == pytest.approx(0.25)
    assert s["win_rate_math"] == 0.5 and s["win_rate_coding"] == 0.5 and s["win_rate_creative_writing"] == 0.0
    assert s["kl_to_reference"] == 0.0 and "slope1_error" not in s


def test_annotator_ranks_by_the_judge_with_bradley_terry_noise(problem):
    """τ = 1 on keyword shares 1 vs 0: P(first ≻ second) = σ(1) = 0.731."""
    rng = np.random.default_rng(0)
    prompt = problem.train_prompts[0]                                   # keywords ["7"]
    wins = np.mean([problem.annotate(prompt, ["it is 7", "it is 8"], rng)[0] == 0 for _ in range(20000)])
    assert abs(wins - 1 / (1 + np.exp(-1.0))) < 0.01


def test_bad_judge_and_missing_file_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="judge 'gpt5' unknown"):
        alpacaeval.Config(judge="gpt5")
    with pytest.raises(ValueError, match="no such file"):
        alpacaeval.load_items(alpacaeval.Config(data=str(tmp_path / "none.json")))


UF_ALL = str(Path(__file__).resolve().parents[2] / "fixtures" / "alpacaeval" / "ultrafeedback_all.jsonl")


def test_uf_all_rows_are_ranked_by_overall_score_then_the_fine_grained_rating():
    """The fixture is openbmb/UltraFeedback's schema; its rankings by hand (the 3-completion row is dropped)."""
    _, trains = alpacaeval.load_items(alpacaeval.Config(**{**alpacaeval.SMALLEST, "train_data": UF_ALL}))
    assert [t["prompt"] for t in trains] == ["What is 6 times 7?", "Name a primary colour.",
                                             "Translate 'chat' from French.", "Give a synonym of fast.",
                                             "What is the capital of Italy?"]
    # overall 9 > 7.5 > 3 > 2
    assert trains[0]["responses"] == ["6 times 7 is 42.", "It is 42.", "It is 36.", "Maybe 48."]
    # (overall, fine-grained) 8/4.5 > 8/4 > 5/3.25 > 5/3
    assert trains[1]["responses"] == ["Red, yellow and blue.", "Red is a primary colour.", "Blue.", "Green."]
    # fine-grained_score null: the tie at 6 goes to the mean Rating, 4 ("N/A" left out) > 3
    assert trains[2]["responses"] == ["'Chat' means cat.", "Cat.", "Hat.", "Dog."]
    assert trains[3]["responses"] == ["Rapid, or quick.", "Quick.", "Speedy.", "Slow."]
    assert alpacaeval.load_items(alpacaeval.Config(**{**alpacaeval.SMALLEST, "train_data": UF_ALL,
                                                      "train_limit": 2}))[1] == trains[:2]


def test_uf_all_gives_epa_three_strong_negatives_and_binarized_pairs_one():
    from methods.preference import epa

    ctx = RunContext(seed=0).for_task()
    uf_all = alpacaeval.build(alpacaeval.Config(**{**alpacaeval.SMALLEST, "train_data": UF_ALL}), ctx)
    assert len(uf_all.train_prompts) == 5 and all(len(o) == 4 for o in uf_all.off_policy)
    assert uf_all.train_prompts[0] == "What is 6 times 7?\n" and uf_all.off_policy[1][0] == "Red, yellow and blue."
    assert epa.skip(uf_all, epa.Config(strong_negatives=3)) is None
    binarized = alpacaeval.build(alpacaeval.Config(**alpacaeval.SMALLEST), ctx)
    assert epa.skip(binarized, epa.Config(strong_negatives=3)) == "epa needs 3 strong negatives, the task has 1"


@pytest.mark.integration
def test_bench_runs_epa_with_three_strong_negatives_on_uf_all_and_skips_it_on_binarized(tmp_path):
    from bench.store import Store
    from tests.leaderboard.paper_cli import bench

    task = [f"task.{k}={v}" for k, v in alpacaeval.SMALLEST.items()]
    flags = [x for s in task + ["strong_negatives=3", "batch_size=4", "weak_negatives=2"] for x in ("--set", s)]
    done = bench("run", "--method", "epa", "--task", "alpacaeval", *flags, "--set", f"task.train_data={UF_ALL}",
                 db=tmp_path / "b.db", timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    skipped = bench("run", "--method", "epa", "--task", "alpacaeval", *flags, db=tmp_path / "b.db", timeout=600)
    assert skipped.returncode == 0, skipped.stderr[-2000:]
    runs = {r.task_config.get("train_data"): r for r in Store.open(f"sqlite:///{tmp_path / 'b.db'}").runs(method="epa")}
    assert runs[UF_ALL].status == "done" and runs["sample"].status == "skipped"   # the packaged pairs: one negative
    assert runs["sample"].error == "epa needs 3 strong negatives, the task has 1"
    metrics = Store.open(f"sqlite:///{tmp_path / 'b.db'}").metrics([runs[UF_ALL].run_key])[runs[UF_ALL].run_key]
    assert 0 <= metrics["win_rate"] <= 1 and metrics["kl_to_reference"] != 0.0     # trained away from π_ref


def test_bad_train_data_is_a_clear_error(tmp_path):
    allowed = "sample, uf-binarized, uf-all, <local .json/.jsonl file>"
    with pytest.raises(ValueError, match=f"train_data 'uf' unknown; allowed: {allowed}"):
        alpacaeval.Config(train_data="uf")
    with pytest.raises(ValueError, match="train_data '.*none.jsonl': no such file"):
        alpacaeval.load_items(alpacaeval.Config(**{**alpacaeval.SMALLEST, "train_data": str(tmp_path / "none.jsonl")}))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "x"}\n')
    with pytest.raises(ValueError, match="a train_data row needs 'instruction' and 'completions'"):
        alpacaeval.load_items(alpacaeval.Config(**{**alpacaeval.SMALLEST, "train_data": str(bad)}))


# ---- AlpacaEval's own instructions (instructions.jsonl) and the published LC metric in the task ----------------------

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "alpacaeval"
needs_data = pytest.mark.skipif(not (DATA / "instructions.jsonl").is_file(),
                                reason=f"the AlpacaEval instructions are not at {DATA}")


LOCAL = {**alpacaeval.SMALLEST, "train_data": alpacaeval.FIXTURE}   # the fixture's pairs: no hub


def write_instructions(folder: Path, n: int = 6) -> Path:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"index": i, "instruction": f"Question {i}?", "dataset": "test", "reference_output": "Answer " * (i + 1)}
            for i in reversed(range(n))]                                  # out of order: read back in index order
    (folder / "instructions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_instructions_jsonl_from_a_file_or_its_folder(tmp_path):
    folder = write_instructions(tmp_path / "ae")
    config = alpacaeval.Config(**{**LOCAL, "data": str(folder)})
    evals, trains = alpacaeval.load_items(config)
    assert [e["index"] for e in evals] == list(range(6)) and evals[2]["output"] == "Answer Answer Answer "
    assert evals[0]["instruction"] == "Question 0?" and len(trains) == 8           # the fixture's pairs
    assert alpacaeval.load_items(alpacaeval.Config(**{**LOCAL, "data": str(folder / "instructions.jsonl")}))[0] == evals
    limited = alpacaeval.Config(**{**LOCAL, "data": str(folder), "eval_max_chars": 30, "eval_limit": 2})
    assert [e["index"] for e in alpacaeval.load_items(limited)[0]] == [0, 1]   # 11 + 7(i+1) chars ≤ 30: 0, 1, 2;
                                                                               # first 2
    with pytest.raises(ValueError, match="holds no instructions.jsonl"):
        alpacaeval.load_items(alpacaeval.Config(data=str(tmp_path)))
    (tmp_path / "bad.jsonl").write_text('{"index": 0, "instruction": "x"}\n')
    with pytest.raises(ValueError, match="line 1: need the fields index, instruction, reference_output"):
        alpacaeval.load_items(alpacaeval.Config(data=str(tmp_path / "bad.jsonl")))
    with pytest.raises(ValueError, match="lc_difficulty 'gamma' unknown"):
        alpacaeval.Config(lc_difficulty="gamma")


@needs_data
def test_the_805_instructions_and_references():
    evals, _ = alpacaeval.load_items(alpacaeval.Config(**{**LOCAL, "data": str(DATA), "eval_max_chars": 0}))
    assert len(evals) == 805 and [e["index"] for e in evals] == list(range(805))
    assert evals[0]["instruction"].startswith("What are the names of some famous actors that started their careers")
    assert evals[0]["output"].startswith("Several famous actors started their careers on Broadway")
    short = alpacaeval.Config(**{**LOCAL, "data": str(DATA), "eval_max_chars": 1000})
    assert len(alpacaeval.load_items(short)[0]) == 169


def test_scoring_uses_alpaca_evals_glm_with_the_difficulties(tmp_path, monkeypatch):
    """The problem's LC is _alpacaeval_lc.fit_model on its items' γ; auto takes γ from the data folder's published
    annotations, from the hub's df_gamed.csv with data=hub (read offline here), none with the fixture."""
    import pandas as pd

    from tasks.preference import _alpacaeval_lc as lc

    folder = write_instructions(tmp_path / "ae", n=12)
    rng = np.random.default_rng(0)
    annotations = pd.DataFrame([{"model": m, "index": i, "preference": float(rng.uniform()),
                                 "model_output_chars": int(rng.integers(1, 90)),
                                 "reference_output_chars": 7 * (i + 1)} for m in ("a", "b", "c") for i in range(12)])
    annotations.to_csv(folder / "preferences.csv.gz", index=False)
    problem = alpacaeval.build(alpacaeval.Config(**{**LOCAL, "data": str(folder)}), RunContext(seed=0).for_task())
    gamma = lc.instruction_difficulties(annotations)
    assert problem.lc_win_rate.args[0] == pytest.approx(gamma.to_numpy()) and problem.lc_win_rate.args[1].empty
    responses = tuple("word " * k for k in range(12))
    zeros = np.zeros(12)
    s = score(problem, PreferenceResult(responses=responses, logp_policy=zeros, logp_ref=zeros))
    wins = np.array([problem.judge([p], [r])[0] > problem.judge([p], [b])[0] for p, r, b in
                     zip(problem.eval_prompts, responses, problem.baseline_responses, strict=True)], float)
    expected = lc.fit_model(wins, [len(r) for r in responses], [len(b) for b in problem.baseline_responses],
                            gamma.to_numpy())
    assert s["lc_win_rate"] == pytest.approx(expected["lc_win_rate"], abs=1e-12)
    few = alpacaeval.build(alpacaeval.Config(**{**LOCAL, "data": str(folder), "eval_limit": 4}),
                           RunContext(seed=0).for_task())
    few_scores = score(few, PreferenceResult(responses=responses[:4], logp_policy=zeros[:4], logp_ref=zeros[:4]))
    assert "win_rate" in few_scores and "lc_win_rate" not in few_scores          # the GLM's 5-fold CV needs 5
    assert alpacaeval.lc_inputs(alpacaeval.Config(**{**LOCAL, "data": str(folder),
                                                     "lc_difficulty": "none"})) == (None, None)
    assert alpacaeval.lc_inputs(alpacaeval.Config(**alpacaeval.SMALLEST)) == (None, None)
    hub = pd.DataFrame({"model": "gpt4_1106_preview_verbose", "index": [0, 1, 0], "preference": [0.2, 0.6, np.nan],
                        "std_delta_len": [0.5, -1.0, 0.0], "instruction_difficulty": [0.3, -0.4, 0.3],
                        "not_gamed_baseline": False})
    hub.to_csv(tmp_path / "df_gamed.csv", index=False)
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda **kwargs: str(tmp_path / "df_gamed.csv"))
    gamma, gamed = alpacaeval.lc_inputs(alpacaeval.Config())
    assert gamma.to_dict() == {0: 0.3, 1: -0.4}
    np.testing.assert_allclose(gamed.to_numpy(), [[np.tanh(0.5), 0.3, 0.2], [np.tanh(-1.0), -0.4, 0.6]])



def test_gamed_baselines_in_the_data_folder_regularise_the_offline_lc(tmp_path):
    """With gamed_baselines.csv.gz and gamed_baselines_glm.csv beside preferences.csv.gz, the task's LC inputs are
    _alpacaeval_lc.regulariser's: γ on the published scale and the gamed baselines' rebuilt rows."""
    import pandas as pd

    from tasks.preference import _alpacaeval_lc as lc

    folder = write_instructions(tmp_path / "ae", n=12)
    rng = np.random.default_rng(3)
    ref = 40 * np.arange(1, 13)
    hard = np.linspace(-3, 3, 12)                                  # instruction difficulties, so γ is not flat
    annotations = pd.DataFrame([{"model": m, "index": i, "preference": float(1 / (1 + np.exp(-q - hard[i]))),
                                 "model_output_chars": int(rng.integers(20, 600)), "reference_output_chars": ref[i]}
                                for m, q in (("a", -1.0), ("b", 0.0), ("c", 1.0)) for i in range(12)])
    annotations.to_csv(folder / "preferences.csv.gz", index=False)
    pd.concat([pd.DataFrame({"model": name, "index": range(12), "model_output_chars": (ref * k).astype(int),
                             "reference_output_chars": ref})
               for name, k in (("gpt4_1106_preview_verbose", 1.4), ("gpt4_1106_preview_concise", 0.6))]
              ).to_csv(folder / lc.GAMED_FILES[0], index=False)
    pd.DataFrame({"model": ["gpt4_1106_preview_verbose", "gpt4_1106_preview_concise"], "np.tanh(std_delta_len)":
                  [-1.5, -1.6], "instruction_difficulty": [0.8, 0.7], "not_gamed_baseline.astype(float)": [0.2, -0.3],
                  "length_controlled_winrate": [51.6, 41.9], "win_rate": [64.3, 22.9]}
                 ).to_csv(folder / lc.GAMED_FILES[1], index=False)
    gamma, gamed = alpacaeval.lc_inputs(alpacaeval.Config(**{**LOCAL, "data": str(folder)}))
    expected_gamma, rows = lc.regulariser(lc.instruction_difficulties(annotations), lc.read_gamed_baselines(folder))
    pd.testing.assert_series_equal(gamma, expected_gamma)
    np.testing.assert_allclose(gamed.to_numpy(), rows[["tanh_len", "gamma", "preference"]].to_numpy())
    assert len(gamed) == 24 and gamed["preference"].mean() == pytest.approx((64.3 + 22.9) / 200, abs=1e-6)

@pytest.mark.integration
@needs_data
def test_bench_run_trains_a_tiny_policy_and_scores_it_against_the_real_references(tmp_path):
    """The CPU-scale command of the README: a tiny GPT-2 trained by DPO on the fixture's pairs, judged by a tiny
    (untrained) reward model against AlpacaEval 2.0's reference outputs on the 169 short instructions."""
    from bench.store import Store
    from tests.leaderboard.paper_cli import bench

    settings = {"data": str(DATA), "model": "tiny-gpt2", "judge": "reward_model:tiny-gpt2",
                "annotator": "reward_model:tiny-gpt2", "train_data": alpacaeval.FIXTURE, "max_new_tokens": 16,
                "eval_max_chars": 1000}
    flags = [x for k, v in settings.items() for x in ("--set", f"task.{k}={v}")]
    done = bench("run", "--method", "dpo", "--task", "alpacaeval", *flags, db=tmp_path / "b.db", timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    store = Store.open(f"sqlite:///{tmp_path / 'b.db'}")
    (run,) = store.runs(method="dpo", task="alpacaeval")
    assert run.status == "done" and run.task_version == 3
    metrics = store.metrics([run.run_key])[run.run_key]
    assert 0 <= metrics["win_rate"] <= 1 and 0 < metrics["lc_win_rate"] < 1 and metrics["kl_to_reference"] != 0.0


def test_the_papers_alpacaeval_claims_are_judged_with_the_published_lc(tmp_path, monkeypatch):
    """SimpleMix's and EPA's paper-scale AlpacaEval claims compare lc_win_rate of cells whose task config reads the
    hub's published instruction difficulties and gamed baselines (what alpaca_eval itself downloads)."""
    from bench.registry import Registry
    from leaderboard.claims import load_paper

    registry = Registry.discover()
    groups = [g for slug in ("simplemix", "epa") for c in load_paper(registry, slug).claims
              if c.scale == "paper-scale" for g in c.groups if g.task == "alpacaeval"]
    assert len(groups) == 8
    calls = []
    monkeypatch.setattr(alpacaeval, "hub_difficulty", lambda: calls.append(1) or ("γ", "gamed"))
    for group in groups:
        config = alpacaeval.Config(**group.task_config)
        assert (config.data, config.lc_difficulty, config.judge) == ("hub", "auto", "alpaca_eval")
        assert alpacaeval.lc_inputs(config) == ("γ", "gamed")
    assert len(calls) == 8
    assert all(c.metric == "lc_win_rate" for slug in ("simplemix", "epa") for c in load_paper(registry, slug).claims
               if c.scale == "paper-scale")


def test_the_defaults_are_the_cpu_scale_and_the_papers_setting_is_named():
    """`--set task.data=PATH` alone must run on a CPU: no hub model, no OpenAI judge, the packaged training pairs."""
    config = alpacaeval.Config()
    assert config.model == "tiny-gpt2" and config.train_data == "sample"
    assert config.judge.startswith("reward_model:tiny") and config.annotator.startswith("reward_model:tiny")
    paper = alpacaeval.Config(**alpacaeval.PAPER_SETTINGS)
    assert paper.judge == "alpaca_eval" and paper.max_new_tokens == 2048 and paper.eval_max_chars == 0


def test_the_sample_training_pairs_are_the_packaged_files():
    _, trains = alpacaeval.load_items(alpacaeval.Config(data=alpacaeval.FIXTURE))
    _, same = alpacaeval.load_items(alpacaeval.Config(data=alpacaeval.FIXTURE, train_data=alpacaeval.FIXTURE))
    assert trains == same and len(trains) > 0 and all(len(t["responses"]) == 2 for t in trains)


@pytest.mark.integration
@needs_data
def test_one_flag_trains_a_tiny_policy_and_stores_raw_and_lc_win_rates_against_the_real_references(tmp_path):
    from bench.store import Store
    from tests.leaderboard.paper_cli import bench

    done = bench("run", "--method", "dpo", "--task", "alpacaeval", "--set", f"task.data={DATA}",
                 db=tmp_path / "a.db", timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    store = Store.open(f"sqlite:///{tmp_path / 'a.db'}")
    (run,) = store.runs(method="dpo")
    metrics = store.metrics([run.run_key])[run.run_key]
    assert run.status == "done" and 0 <= metrics["win_rate"] <= 1 and 0 <= metrics["lc_win_rate"] <= 1
    assert metrics["kl_to_reference"] != 0.0                                   # the policy was trained


def test_the_claims_files_name_the_papers_setting():
    """The paper-scale alpacaeval cells carry PAPER_SETTINGS (EPA: its own base model, UF-all for EPA itself), so the
    constant and the claims files cannot drift apart."""
    from bench.registry import Registry
    from leaderboard.claims import load_paper

    registry, own = Registry.discover(), {"model", "train_data"}
    cells = [(slug, g) for slug in ("simplemix", "epa") for c in load_paper(registry, slug).claims
             if c.scale == "paper-scale" for g in c.groups if g.task == "alpacaeval"]
    assert len(cells) == 8
    for slug, group in cells:
        keys = set(alpacaeval.PAPER_SETTINGS) - (own if slug == "epa" else set())
        assert {k: group.task_config[k] for k in keys} == {k: alpacaeval.PAPER_SETTINGS[k] for k in keys}
