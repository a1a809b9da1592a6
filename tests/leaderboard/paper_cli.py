"""Helpers for the per-paper end-to-end tests: run `bench` on a store, read its verdict table."""

import os
import subprocess
import sys

VERDICTS = ("not reproduced", "reproduced", "partially", "uninformative", "inconclusive", "not run", "insufficient seeds")  # longest first


def bench(*args: str, db, timeout: int = 1800) -> subprocess.CompletedProcess:
    env = {**os.environ, "BENCH_DB_URL": f"sqlite:///{db}", "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def verdicts(stdout: str, claim_ids) -> dict[str, str]:
    """{claim id: verdict} from the table `bench claims` / `bench reproduce` prints."""
    found = {}
    for line in stdout.splitlines():
        words = line.split()
        if words and words[0] in claim_ids:
            found[words[0]] = next((v for v in VERDICTS if f" {v} " in line), "?")
    return found


def cpu_scale_verdicts(slug: str, tmp_path, seeds: int | None = None, *, claims=None, runs: int | None = None,
                       judge_all: bool = False) -> dict[str, str]:
    """{claim id: verdict} after running, in a fresh store, every cell of the paper's claims that `claims` selects
    (default: those not paper-scale, which need GPUs and hub models and stay "not run"). `runs`: how many runs those
    cells must make (checked when given); `judge_all`: judge every claim of the paper, not only the selected ones."""
    from bench.registry import Registry
    from bench.store import Store
    from leaderboard.claims import evaluate_paper, group_cells, load_paper
    from runners.local import run_cells

    registry = Registry.discover()
    paper = load_paper(registry, slug)
    chosen = [c for c in paper.claims if (claims or (lambda c: c.scale != "paper-scale"))(c)]
    cells = {cell for claim in chosen for g in claim.groups for cell in group_cells(g, registry, seeds or claim.seeds)}
    store = Store.open(f"sqlite:///{tmp_path}/verdicts.db")
    summary = run_cells(sorted(cells, key=lambda c: c.run_key), store, registry)
    assert set(summary.counts) == {"done"}, summary.counts
    assert runs is None or summary.counts["done"] == runs, (summary.counts, runs)
    ids = {c.id for c in (paper.claims if judge_all else chosen)}
    return {v.claim.id: v.verdict for v in evaluate_paper(paper, store, registry, seeds=seeds) if v.claim.id in ids}


def reproduce_then_claims(slug: str, db, expected: dict[str, str], cells: int, *, workers: int | None = None) -> str:
    """`bench reproduce` runs the paper's `cells` and prints `expected`; `bench claims` then prints the same
    verdicts from the store; a second reproduce finds every cell already done. Returns the claims table."""
    parallel = ("--workers", str(workers)) if workers else ()
    run = bench("reproduce", slug, *parallel, db=db)
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"{cells} done" in run.stderr
    assert verdicts(run.stdout, expected) == expected
    claims = bench("claims", "--paper", slug, db=db)
    assert claims.returncode == 0 and verdicts(claims.stdout, expected) == expected
    again = bench("reproduce", slug, db=db)
    assert f"{cells} already done" in again.stderr
    return claims.stdout
