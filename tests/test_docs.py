"""Every code block of README.md and docs/ is run by a test, so that no example rots (issue 43).

The fast tier reads every block: its language is known, a block that is not run says why (`skip-test: WHY` in its
fence), every `bench` command parses against the CLI (skipped blocks too), the scripts named exist, the README keeps
its two quick-start commands (the second is `.ci/run`'s, verbatim) within 250 lines and without a measurement log,
docs/performance.md is one table with a command in every row, and every relative link resolves. The integration tier
runs the README top to bottom in a temporary copy of the tree on a temporary store (tests/doc_blocks.py), and each
report's `bench claims` command. docs/adding-a-paper.md is run by tests/test_adding_a_paper.py (slow); a report's
`bench reproduce` command is what the slow tier's verdict-lock test runs (tests/leaderboard/test_verdict_lock.py).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from bench.store import Store
from tests.doc_blocks import (
    FILE_ONLY,
    LANGUAGES,
    ROOT,
    Block,
    blocks,
    commands,
    copy_tree,
    docs,
    environment,
    is_bench,
    logical_lines,
    parse_bench,
    prose,
    run_document,
    run_in_one_process,
    segments,
    split_env,
)

README = ROOT / "README.md"
PERFORMANCE = ROOT / "docs" / "performance.md"
REPORTS = ROOT / "docs" / "papers"
MAX_README_LINES = 250
# documents another test runs, top to bottom
RUN_ELSEWHERE = {ROOT / "docs" / "adding-a-paper.md": "tests/test_adding_a_paper.py"}
# a report's block reproduces its paper: the slow tier's tests/leaderboard/test_verdict_lock.py runs that
REPORT_REASON = "the paper's reproduction: tests/leaderboard/test_verdict_lock.py runs it against the lock"
# commands of runnable blocks that are not `bench`: why each is not run here
SETUP = {
    "python3 -m venv .venv": "creates the environment these tests already run in",
    ".venv/bin/pip install -q -c constraints.txt -e .": "installs the project, which these tests already import",
    ".venv/bin/pip install -q -c constraints.txt -e '.[test]'": "the same, with the test extras these tests need",
    ".venv/bin/python -m pytest -n 2": "the unit tier itself; .ci/run runs this README line verbatim (checked below)",
}
MIN_REASON_WORDS = 3


def every_block() -> list[Block]:
    return [b for doc in docs() for b in blocks(doc)]


def _id(block: Block) -> str:
    return block.where()


def is_report(block: Block) -> bool:
    return block.doc.parent == REPORTS and block.doc.name != "README.md"


# ---- the fast tier: what every block is ------------------------------------------------------------------------

@pytest.mark.parametrize("block", every_block(), ids=_id)
def test_every_block_is_run_or_says_why(block):
    assert block.language in LANGUAGES, f"{block.where()}: fence language {block.language!r}; allowed: {LANGUAGES}"
    assert not block.unknown, f"{block.where()}: unknown fence words {block.unknown} (file=PATH, skip-test: WHY)"
    if block.skip is not None:
        assert len(block.skip.split()) >= MIN_REASON_WORDS, f"{block.where()}: skip-test: WHY, got {block.skip!r}"
    elif block.language in FILE_ONLY:
        assert block.file, f"{block.where()}: a {block.language} block is a file (file=PATH) or says why it is not run"
    if block.language == "python":
        compile(block.text, block.where(), "exec")
    if block.language == "yaml":
        yaml.safe_load(block.text)


@pytest.mark.parametrize("block", [b for b in every_block() if b.language == "bash"], ids=_id)
def test_every_bench_command_parses_and_every_named_script_exists(block):
    if block.skip is None and not is_report(block):
        commands(block, SETUP)  # each command is one this suite runs, or a set-up step with its reason
    for line in logical_lines(block.text):
        for words in segments(line):
            command = split_env(words)[1]
            if is_bench(command):
                parse_bench(command[1:])
            elif command[:1] == ["python"] and command[1:2] and command[1].endswith(".py"):
                assert (ROOT / command[1]).is_file(), f"{block.where()}: no script {command[1]}"
    if is_report(block):
        slug = block.doc.stem
        for line in logical_lines(block.text):
            words = shlex.split(line, comments=True)
            assert slug in words, f"{block.where()}: a report's commands are about its own paper, {slug}"


def _quick_start() -> list[str]:
    return [logical_lines(b.text)[0] for b in blocks(README)[:2]]


def test_the_readme_starts_with_the_two_commands_and_fits_in_250_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; at most {MAX_README_LINES}"
    run, test = _quick_start()
    assert segments(run)[-1] == shlex.split(".venv/bin/bench run --method dicesgd --task performative")
    assert segments(run)[0] == segments(test)[0] == ["python3", "-m", "venv", ".venv"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test in ci, "README's test command is not .ci/run's (which runs it verbatim)"


def test_the_readme_holds_no_measurement_log():
    text = README.read_text(encoding="utf-8")
    commits = re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)
    dates = re.findall(r"\b(?:19|20)\d\d-\d\d-\d\d\b", text)
    here = re.findall(r"this (?:\d-core )?machine", text)
    assert not (commits or dates or here), (f"README.md: commit hashes {commits}, dates {dates}, {here}: measurements "
                                            "belong in docs/performance.md")


def _table_rows(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def test_performance_is_one_table_with_a_command_in_every_row():
    text = PERFORMANCE.read_text(encoding="utf-8")
    tables = re.findall(r"(?:^\|.*\n)+", text, flags=re.MULTILINE)
    assert len(tables) == 1, f"docs/performance.md holds {len(tables)} tables; one table of current figures"
    header, rule, *rows = _table_rows(tables[0])
    assert header == ["what", "figure", "command"] and set("".join(rule)) <= set("-:") and rows
    for what, figure, command in rows:
        commands = re.findall(r"`([^`]+)`", command)
        assert figure and commands, f"docs/performance.md: the row {what!r} needs a figure and its command"
        for words in (split_env(shlex.split(c))[1] for c in commands):
            words = words[1:] if words[:1] == ["time"] else words
            if is_bench(words):
                parse_bench(words[1:])
            elif words[:1] == ["python"]:
                assert (ROOT / words[1]).is_file(), f"docs/performance.md: no script {words[1]}"


def _anchors(doc: Path) -> set[str]:
    """GitHub's anchors of a markdown file's headings."""
    headings = re.findall(r"^#+\s+(.*)$", prose(doc), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("doc", docs(), ids=lambda d: str(d.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(doc)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        assert linked.exists(), f"{doc.relative_to(ROOT)}: the link {target} points at nothing"
        if anchor:
            assert anchor in _anchors(linked), f"{doc.relative_to(ROOT)}: {linked.name} has no heading #{anchor}"


# ---- the integration tier: the README and the reports, run ---------------------------------------------------------

@pytest.mark.integration
def test_the_readme_runs_top_to_bottom(tmp_path):
    """Every runnable block of the README, in order, in a copy of the tree; then the store holds what they ran: only
    done runs, and the main job's DiceSGD at T = 1e5 within 1e-3 of θ_PS (its bias is removed, its rate O(1/t))."""
    tree, store = copy_tree(tmp_path / "tree"), tmp_path / "docs.db"
    ran = run_document(blocks(README), tree, environment(tree, store), SETUP)
    assert any(r.command.startswith(".venv/bin/bench run --method dicesgd") for r in ran)
    runs = Store.open(f"sqlite:///{store}").runs()
    assert runs and {r.status for r in runs} == {"done"}
    metrics = Store.open(f"sqlite:///{store}").metrics(r.run_key for r in runs)
    (main,) = [r for r in runs if r.method == "dicesgd" and r.method_config["T"] == 100_000]
    assert metrics[main.run_key]["final_gap"] < 1e-3
    assert any(r.method == "constant_step_sgd" for r in runs)  # the README's method, discovered by its file


@pytest.mark.integration
def test_every_reports_claims_command_shows_its_locked_verdicts(tmp_path):
    """With nothing stored, each report's `bench claims --paper SLUG` shows its verdict lock's reference run, every
    claim of it (the commands run in one process: tests/doc_blocks.run_in_one_process)."""
    wanted = []
    for report in sorted({block.doc for block in filter(is_report, every_block())}):
        found = [(block, w[1:]) for block in blocks(report) if block.skip is None
                 for w in map(lambda line: shlex.split(line, comments=True), logical_lines(block.text))
                 if w[:2] == ["bench", "claims"]]
        where = report.relative_to(ROOT)
        assert found, f"{where}: a report shows its verdicts in a run block with `bench claims --paper {report.stem}`"
        wanted += found
    store = tmp_path / "empty.db"
    Store.open(f"sqlite:///{store}")  # created: `bench claims` reads an existing store
    results = run_in_one_process([argv for _, argv in wanted], tmp_path, environment(ROOT, store))
    for (block, argv), result in zip(wanted, results, strict=True):
        slug = block.doc.stem
        locked = yaml.safe_load((ROOT / "leaderboard" / "verdicts" / f"{slug}.yaml").read_text(encoding="utf-8"))
        assert result["code"] == 0 and "nothing stored: the reference run" in result["stdout"], (block.where(), result)
        missing = [claim for claim in locked["claims"] if claim not in result["stdout"]]
        assert not missing, f"{block.where()}: `bench {shlex.join(argv)}` does not show {missing}"


def test_documents_run_elsewhere_exist():
    for doc, test in RUN_ELSEWHERE.items():
        assert doc.is_file() and (ROOT / test).is_file(), f"{doc.relative_to(ROOT)} is run by {test}"
