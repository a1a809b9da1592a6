"""docs/adding-a-paper.md, followed in a copy of the repository (issue 43).

The page's blocks are read from the markdown (tests/doc_blocks.py), so the page and this test cannot drift: its files
are written into a temporary copy of the tree, its commands (`bench`, the page's pytest runs) run there on a
temporary store, in two parts: up to section 9, then section 9 (a newcomer's method on the paper's cards). The toy
paper was chosen for its closed forms (James & Stein, 1961): at d = 10, n = 10, σ = 1 and θ = 0 the sample mean's
risk is dσ²/n = 1, James–Stein's 2σ²/n = 0.2, the oracle's 0, and the sample mean's risk after k draws falls as
dσ²/k (log-log slope −1). Each verdict the page states is checked, with its numbers against those answers. The
reference of the claims file at the page's end is loaded by the registry, and must use every key the schema has.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from bench.store import Store
from tests.doc_blocks import ROOT, Block, blocks, copy_tree, environment, run_document

pytestmark = [pytest.mark.slow, pytest.mark.cost(90)]

DOC = ROOT / "docs" / "adding-a-paper.md"
SLUG = "toy-james-stein"
SECTION_9 = "## 9. "
REFERENCE_HEADING = "## The claims file"
D, N = 10, 10  # the task's defaults: dimension and observations (σ = 1)


@dataclass
class Walk:
    tree: Path
    store: Path
    env: dict[str, str]
    before: list[dict]  # `bench claims --format json` rows after section 8
    after: list[dict]   # ... and after section 9
    lock: dict          # the verdict lock written in section 6
    pytest_output: list[str]
    checks: dict[str, str]  # `bench check NAME`'s output (stdout, then stderr) by NAME


def _heading_line(heading: str) -> int:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    return next(i + 1 for i, line in enumerate(lines) if line.startswith(heading))


def _claims_json(tree: Path, env: dict[str, str]) -> list[dict]:
    import subprocess

    out = subprocess.run([sys.executable, "-m", "bench", "claims", "--paper", SLUG, "--format", "json"], cwd=tree,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> Walk:
    root = tmp_path_factory.mktemp("adding-a-paper")
    tree, store = copy_tree(root / "tree", extra=("tests", "docs", "pyproject.toml")), root / "walk.db"
    env = environment(tree, store)
    every = [b for b in blocks(DOC) if b.skip is None]
    cut = _heading_line(SECTION_9)
    first = run_document([b for b in every if b.line < cut], tree, env, {})
    before = _claims_json(tree, env)
    lock = yaml.safe_load((tree / "leaderboard" / "verdicts" / f"{SLUG}.yaml").read_text(encoding="utf-8"))
    second = run_document([b for b in every if b.line > cut], tree, env, {})
    pytest_output = [r.result.stdout for r in (*first, *second) if " pytest " in f" {r.command} "]
    checks = {r.command.split()[-1]: r.result.stdout + r.result.stderr for r in (*first, *second)
              if r.command.startswith("bench check")}
    return Walk(tree, store, env, before, _claims_json(tree, env), lock, pytest_output, checks)


def _row(rows: list[dict], claim: str) -> dict:
    (row,) = [r for r in rows if r["claim"] == claim]
    return row


def _cell(row: dict, label: str) -> dict:
    (cell,) = [c for c in row["cells"] if c["label"] == label]
    return cell


def test_the_runs_of_section_3_have_the_closed_form_risks(walk):
    store = Store.open(f"sqlite:///{walk.store}")
    default = {"dim": D, "budget": N, "sigma": 1.0, "signal": 0.0, "replicates": 1000}
    runs = [r for r in store.runs(task="gaussian_means")
            if r.task_config == default and r.method_config.get("c", 1.0) == 1.0 and r.status == "done"]
    risks = store.metrics(r.run_key for r in runs)
    by_method: dict[str, list[float]] = {}
    for run in runs:
        by_method.setdefault(run.method, []).append(risks[run.run_key]["risk"])
    assert all(len(by_method[m]) >= 5 for m in ("james_stein", "sample_mean", "oracle_shrinkage"))
    assert all(abs(r - 2 / N) <= 0.02 for r in by_method["james_stein"]), by_method["james_stein"]      # 0.2 ± 0.02
    assert all(abs(r - D / N) <= 0.05 for r in by_method["sample_mean"]), by_method["sample_mean"]      # 1.0 ± 0.05
    assert set(by_method["oracle_shrinkage"]) == {0.0}                                                  # exactly 0


def test_the_pages_tests_ran_and_passed(walk):
    assert len(walk.pytest_output) == 3
    for output in walk.pytest_output:
        passed = re.search(r"(\d+) passed", output)
        assert passed and int(passed.group(1)) >= 1 and not re.search(r"\d+ (failed|error|skipped)", output), output


def test_bench_check_passes_the_method_the_task_and_the_paper(walk):
    assert set(walk.checks) == {"james_stein", "gaussian_means", SLUG}
    for name, output in walk.checks.items():
        counted = re.search(r"(\d+) of (\d+) checks passed", output)
        assert counted and counted.group(1) == counted.group(2) and int(counted.group(1)) >= 4, (name, output)
        assert "fail" not in output.replace("failed", ""), output


def test_section_6_gives_the_verdicts_the_page_states(walk):
    rows = walk.before
    assert [r["claim"] for r in rows if r["role"] == "claim"] == ["js-beats-sample-mean", "js-risk-at-zero"]
    control = _row(rows, "world-rewards-shrinkage")
    assert (control["role"], control["verdict"], control["control"]) == ("control", "reproduced", "fails")
    assert _cell(control, "oracle_shrinkage")["mean"] == 0.0
    assert control["estimate"] == pytest.approx(D / N, abs=0.03)        # the gap: the sample mean's risk itself
    beats = _row(rows, "js-beats-sample-mean")
    assert (beats["verdict"], beats["control"], beats["switched"]) == ("reproduced", "fails", "fails")
    assert math.exp(beats["estimate"]) == pytest.approx(D / 2, rel=0.1)  # the risk ratio dσ²/n ÷ 2σ²/n = 5
    at_zero = _row(rows, "js-risk-at-zero")
    assert (at_zero["verdict"], at_zero["control"], at_zero["switched"]) == ("reproduced", "fails", "fails")
    assert at_zero["estimate"] == pytest.approx(2 / N, abs=0.01)
    check = _row(rows, "sample-mean-risk-1-over-n")
    assert (check["role"], check["verdict"]) == ("check", "reproduced")
    assert check["estimate"] == pytest.approx(-1.0, abs=0.03)


def test_the_lock_holds_those_verdicts_and_names_its_command(walk):
    assert walk.lock["paper"] == SLUG and SLUG in walk.lock["command"] and "--all" not in walk.lock["command"]
    assert {claim: entry["verdict"] for claim, entry in walk.lock["claims"].items()} == \
        {r["claim"]: r["verdict"] for r in walk.before}


def test_section_9_puts_the_new_method_on_the_papers_cards(walk):
    new = _row(walk.after, "positive-part-beats-js")
    assert (new["verdict"], new["control"], new["switched"]) == ("reproduced", "fails", "none")
    assert [c["label"] for c in new["cells"]] == ["james_stein_plus", "james_stein"]
    plus, js = (_cell(new, m)["mean"] for m in ("james_stein_plus", "james_stein"))
    assert plus < js == pytest.approx(2 / N, abs=0.01)
    unchanged = {r["claim"]: r["verdict"] for r in walk.after if r["claim"] != "positive-part-beats-js"}
    assert unchanged == {r["claim"]: r["verdict"] for r in walk.before}


# ---- the reference of the claims file ---------------------------------------------------------------------------

def _reference() -> Block:
    start = _heading_line(REFERENCE_HEADING)
    (block,) = [b for b in blocks(DOC) if b.line > start and b.language == "yaml"]
    return block


_READ = """
import dataclasses, json, sys
from bench.registry import Registry
from leaderboard.claims import load_paper
from leaderboard.claims import model

paper = load_paper(Registry.discover(plugins=False), sys.argv[1])
claims = {c.id: {k: v for k, v in dataclasses.asdict(c).items() if k not in ("groups", "control")}
          for c in paper.claims}
expect_keys = {k: list(getattr(model, f"{k.upper()}_KEYS")) for k in model.KINDS}
print(json.dumps({"claims": claims, "claim_keys": list(model.CLAIM_KEYS), "expect_keys": expect_keys,
                  "kinds": list(model.KINDS)}, default=str))
"""


def test_the_claims_reference_is_a_valid_file_that_uses_every_key(walk):
    import subprocess

    block = _reference()
    slug = yaml.safe_load(block.text)["paper"]
    (walk.tree / "leaderboard" / "papers" / f"{slug}.yaml").write_text(block.text, encoding="utf-8")
    read = subprocess.run([sys.executable, "-c", _READ, slug], cwd=walk.tree, env=walk.env, capture_output=True,
                          text=True, timeout=300)
    assert read.returncode == 0, read.stderr[-2000:]
    schema = json.loads(read.stdout)
    claims, raw = schema["claims"], yaml.safe_load(block.text)
    assert {c["kind"] for c in claims.values()} == set(schema["kinds"])
    entries = [e for section in ("controls", "claims", "checks") for e in raw[section]]
    used = set(raw["defaults"]) | {key for e in entries for key in e}
    assert set(schema["claim_keys"]) <= used, f"keys the reference never shows: {set(schema['claim_keys']) - used}"
    for kind, keys in schema["expect_keys"].items():  # each kind's expect keys, in use or in a comment beside it
        missing = [k for k in keys if not re.search(rf"\b{k}:", block.text)]
        assert not missing, f"{kind}: expect keys the reference never names: {missing}"
    assert claims["a-value"]["expect"] == {"rtol": 0.15} and claims["a-value"]["paper_value"] == 0.2
    assert claims["a-value"]["interval"] == "bootstrap" and claims["a-value"]["approximate"] is True
    assert claims["an-ordering"]["switches"] == ["no shrinkage (c = 0)"]
    assert claims["a-semilog-rate"]["axis"] == "semilog" and claims["a-rate"]["axis"] == "loglog"
    assert claims["a-no-harm"]["no_harm"] is True and claims["a-check"]["role"] == "check"
    assert "a-value" in claims["oracle-separates"]["gates"]
    for command in (["reproduce", slug, "--controls", "--dry-run"], ["check", slug]):  # every cell builds, and so on
        done = subprocess.run([sys.executable, "-m", "bench", *command], cwd=walk.tree, env=walk.env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_blocks_left_out_are_the_app_the_browser_and_the_reference():
    """Every other block of the page runs in the walk; these three say why not (the reference is checked above)."""
    skipped = [(b.language, b.skip) for b in blocks(DOC) if b.skip is not None]
    assert [language for language, _ in skipped] == ["bash", "python", "yaml"]
    assert "serves the app" in skipped[0][1] and "chromium" in skipped[1][1] and "reference" in skipped[2][1]
