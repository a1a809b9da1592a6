"""`bench claims --format json|md|csv`: one unwrapped row per claim, the same verdicts as the table."""

import csv
import io
import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from leaderboard.claims import evaluate_paper
from leaderboard.lock import read_lock
from leaderboard.verdict_export import FIELDS, render_rows, verdict_rows
from tests.leaderboard.test_lock import _fill, paper_and_registry  # noqa: F401  (the toy paper and its runs)


def test_rows_in_every_format_carry_the_verdicts_and_survive_pipes_and_newlines(paper_and_registry, store):  # noqa: F811
    paper, registry = paper_and_registry
    _fill(store, registry)
    paper = replace(paper, claims=[replace(c, fragile="a | pipe\\nand a break") if c.id == "beats" else c
                                   for c in paper.claims])
    rows = verdict_rows(paper, evaluate_paper(paper, store, registry))
    by_id = {r["claim"]: r for r in rows}
    assert [r["claim"] for r in rows] == ["beats", "at-paper-scale", "bounded"]
    beats = by_id["beats"]
    assert (beats["verdict"], beats["control"], beats["fragile"]) == ("reproduced", "fails", True)
    assert by_id["at-paper-scale"]["verdict"] == "not run" and by_id["bounded"]["role"] == "check"
    assert json.loads(render_rows(rows, "json")) == rows
    parsed = list(csv.DictReader(io.StringIO(render_rows(rows, "csv"))))
    assert [r["verdict"] for r in parsed] == [r["verdict"] for r in rows] and list(parsed[0]) == list(FIELDS)
    md = render_rows(rows, "md").splitlines()
    assert len(md) == 2 + len(rows) and all(line.count(" | ") == len(FIELDS) - 1 for line in md[2:])
    with pytest.raises(ValueError, match="allowed: json, md, csv"):
        render_rows(rows, "xml")


def test_bench_claims_as_json_on_a_fresh_checkout_gives_the_locked_verdicts(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "BENCH_DB_URL"}
    proc = subprocess.run([sys.executable, "-m", "bench", "claims", "--paper", "cmdp-bobw", "--format", "json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    lock = read_lock("cmdp-bobw")
    locked = {r["claim"]: r["verdict"] for r in rows if r["source"] == "reference"}
    assert locked == {cid: c.verdict for cid, c in lock.claims.items()}
    assert {r["verdict"] for r in rows if r["scale"] == "paper-scale"} <= {"not run"}
    bad = subprocess.run([sys.executable, "-m", "bench", "claims", "--format", "xml"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert bad.returncode == 2 and "xml" in bad.stderr
