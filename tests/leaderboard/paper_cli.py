"""Helpers for the per-paper end-to-end tests: run `bench` on a store, read its verdict table."""

import subprocess

from tests.helpers import run_bench

VERDICTS = ("not reproduced", "reproduced", "partially", "underpowered", "uninformative", "inconclusive",
            "no-harm holds", "no-harm fails", "not run", "insufficient seeds")  # longer names first


def bench(*args: str, db, timeout: int = 1800, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_bench(*args, db=db, columns=400, timeout=timeout, env=env)


def verdicts(stdout: str, claim_ids) -> dict[str, str]:
    """{claim id: verdict} from the table `bench claims` / `bench reproduce` prints."""
    found = {}
    for line in stdout.splitlines():
        words = line.split()
        if words and words[0] in claim_ids:
            # the verdict column comes before the "why" text, which may name other verdicts ("control not run yet")
            hits = [(line.find(f" {v} "), -len(v), v) for v in VERDICTS if f" {v} " in line]
            found[words[0]] = min(hits)[2] if hits else "?"
    return found
