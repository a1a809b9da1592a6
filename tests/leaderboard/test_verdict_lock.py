"""Every paper's CPU-scale verdicts against its verdict lock (leaderboard/verdicts/<slug>.yaml).

The slow test reproduces a paper from a fresh store (its claims, their negative controls and their switched-off runs,
at the claims' own seeds, every cell on one thread as the lock ran) and compares, on any machine and never skipping:

* every verdict with the one locked for this machine's float numerics (bench/numerics.py) when the lock ran under
  them, else with the verdict it shows (a fragile claim, whose locked verdicts differ between the two numerics, may
  come out as either);
* every cell's mean with the locked one, within √2 times the half-width of the locked 95 % interval (the interval of
  the difference of two means with that spread): a rerun under other rounding draws another sample of the chaotic
  tiny trainings, and that is how far it may fall; a quantity with no spread must agree to 1e-6 relative.

A run with BENCH_LOCK_ROTATION=1 (CI) compares each paper whose inputs (leaderboard/lock.py `paper_inputs`: claims
file, constraints and the import closure of its methods and tasks) changed since its lock, plus a rotating third of the
others (by the commit count of HEAD), so that every paper is compared at least once every three commits of main. The
thirds are balanced by the locks' CPU seconds (longest first, each paper into the lightest third), so that no landing
draws the three dearest reproductions at once.
`pytest -m slow` without it compares all 19. The fast tests check that each lock matches its claims file and that no
locked verdict rests on anything but its interval.
"""

import math
import os
import subprocess
import sys

import pytest

from bench.numerics import fingerprint
from bench.registry import Registry
from bench.store import Store
from leaderboard.claims import CPU_SCALES, claim_groups, evaluate_paper, group_cells, load_paper
from leaderboard.lock import LOCK_DIR, disagreements, paper_inputs, read_lock
from runners.local import run_cells
from tests.leaderboard.paper_cli import bench, verdicts

REGISTRY = Registry.discover()
PAPERS = REGISTRY.papers()
NUMERICS = fingerprint(1)
DECIDED = ("reproduced", "not reproduced", "partially", "no-harm holds", "no-harm fails")
ROTATION = 3


def _lock_cost(slug: str) -> float:
    """The CPU seconds its lock took: each cell runs on one thread, so they are the test's time on a quiet core (the
    lock's wall seconds also hold the load of the machine it ran on)."""
    lock = read_lock(slug)
    return lock.cpu_s if lock is not None and lock.cpu_s is not None else 0.0


def rotation_shares(papers: list[str], costs: dict[str, float], shares: int = ROTATION) -> dict[str, int]:
    """Each paper's share of the rotation: the longest-processing-time rule (dearest paper first, into the share with
    the least cost so far; ties by name and by share), so that every share costs about a third of the whole."""
    load = [0.0] * shares
    share_of = {}
    for slug in sorted(papers, key=lambda s: (-costs[s], s)):
        share = min(range(shares), key=lambda k: (load[k], k))
        share_of[slug] = share
        load[share] += costs[slug]
    return share_of


SHARES = rotation_shares(PAPERS, {slug: _lock_cost(slug) for slug in PAPERS})


def _cpu_claims(paper):
    return [c for c in paper.claims if c.scale in CPU_SCALES]


@pytest.mark.parametrize("slug", PAPERS)
def test_the_lock_matches_its_claims_file(slug):
    lock = read_lock(slug)
    assert lock is not None, f"{LOCK_DIR}/{slug}.yaml is missing: run `bench reproduce --all --controls --lock`"
    claims = _cpu_claims(load_paper(REGISTRY, slug))
    assert set(lock.claims) == {c.id for c in claims}
    assert {cid: c.seeds for cid, c in lock.claims.items()} == {c.id: c.seeds for c in claims}
    assert not lock.commit.endswith("+dirty") and lock.cpu_s is not None and lock.cpu_s > 0
    assert lock.numerics is not None and lock.inputs is not None
    assert all(lock.numerics in c.verdicts for c in lock.claims.values())


def test_no_lock_without_a_paper():
    assert {p.stem for p in LOCK_DIR.glob("*.yaml")} <= set(PAPERS)


@pytest.mark.parametrize("slug", PAPERS)
def test_every_decided_verdict_rests_on_its_interval(slug):
    """No locked claim is decided by the sign of a mean or a 1-SE margin: each reproduced or not reproduced claim
    carries the interval that decided it, on the side its verdict says, at a Holm-adjusted p below 0.05; every
    undecided one names the seeds it needs or why there is none."""
    lock = read_lock(slug)
    paper = load_paper(REGISTRY, slug)
    for claim in _cpu_claims(paper):
        locked = lock.claims[claim.id]
        e = locked.evidence
        decided = {v for v in locked.verdicts.values()} <= set(DECIDED) and locked.verdict in DECIDED
        if claim.role != "claim" or not decided or locked.verdict == "partially":
            continue
        assert e and e["quantity"], f"{claim.id}: a decided verdict without its interval"
        assert e["p_adjusted"] < 0.05, f"{claim.id}: decided at p {e['p_adjusted']}"
        holds = locked.verdict in ("reproduced", "no-harm holds") or not e.get("extra_ok", True)
        clear = (e["low"] >= e["threshold"]) if (e["side"] > 0) == holds else (e["high"] <= e["threshold"])
        deciding = e["direction"] == ("holds" if holds else "fails")
        assert deciding and (clear or e["method"] == "bootstrap"), f"{claim.id}: {e}"
        if locked.verdict == "underpowered":
            assert e.get("seeds_needed") or math.isnan(e["low"]) or e["method"] in ("exact", "ols")


def _rotating(slug: str) -> bool:
    """Compared on this CI run: inputs changed since the lock, or this commit's share of the rotation."""
    lock = read_lock(slug)
    if lock.inputs != paper_inputs(load_paper(REGISTRY, slug), REGISTRY):
        return True
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], capture_output=True, text=True,
                           cwd=LOCK_DIR).stdout.strip()
    return not count.isdigit() or SHARES[slug] == int(count) % ROTATION


# Claims on wall-clock ratios, whose verdict belongs to the machine and its load, are compared by hand in the heavy
# tier (`pytest -m heavy -n 2`): PV against enumeration at k = 6 and 7 read underpowered in the lock (made at load
# 3-8 on 2 cores) and not reproduced on a quiet machine (enumeration the faster), so their verdict is the load's.
MACHINE_TIMED: dict[str, set[str]] = {"prob-verification": {"pv-beats-enumeration-k6", "pv-beats-enumeration-k7"}}


def test_the_machine_timed_claims_are_claims():
    for slug, ids in MACHINE_TIMED.items():
        assert ids <= {c.id for c in _cpu_claims(load_paper(REGISTRY, slug))}


def _reproduce(slug: str, tmp_path, compared=lambda cid: True) -> tuple[dict, list[str]]:
    """(verdict disagreements, cell means outside their locked tolerance) of the claims `compared` selects, from a
    fresh store."""
    paper, lock = load_paper(REGISTRY, slug), read_lock(slug)
    claims = _cpu_claims(paper)
    own = {claim.id: {cell for g in claim_groups(claim, True, paper, REGISTRY)
                      for cell in group_cells(g, REGISTRY, claim.seeds, check=True)} for claim in claims}
    absent = _unbuildable(slug, own)
    cells = set().union(*own.values()) - set().union(*absent.values())
    compared_before = compared
    compared = lambda cid: cid not in absent and compared_before(cid)  # noqa: E731
    store = Store.open(f"sqlite:///{tmp_path}/lock.db")
    summary = run_cells(sorted(cells, key=lambda c: c.run_key), store, REGISTRY, threads=1)
    assert set(summary.counts) <= {"done", "skipped"}, summary.counts
    fresh = [v for v in evaluate_paper(paper, store, REGISTRY) if v.claim.scale in CPU_SCALES and compared(v.claim.id)]
    found = {cid: pair for cid, pair in disagreements(fresh, lock, NUMERICS).items() if compared(cid)}
    return found, _drifted(fresh, lock)


def _unbuildable(slug: str, own: dict) -> dict:
    """{claim id: its cells this machine cannot build} for the claims with such a cell (data the project does not
    ship, e.g. the CoRE release's real cities: the task's `unavailable`), from {claim id: its cells}. They are not
    compared here, and a warning names them and the reason: on a machine with the data (tasks/urban/urban_cities.py
    `data_places`) they are."""
    from bench.cells import unavailable

    missing = {c: r for c in set().union(*own.values()) if (r := unavailable(REGISTRY, c.task, c.task_config))}
    absent = {cid: cells & set(missing) for cid, cells in own.items() if cells & set(missing)}
    if absent:
        import warnings

        warnings.warn(f"{slug}: {len(absent)} claims not compared, their cells cannot be built here: "
                      f"{next(iter(missing.values()))}", stacklevel=2)
    return absent


def _drifted(fresh, lock) -> list[str]:
    """Cell means outside their locked tolerance. Under the lock's own numerics a fresh run repeats the locked one
    bit for bit, so √2 × the locked half-width is generous; under the other numerics a chaotic cell is a new draw of
    the same law, and its mean is compared as two independent means: within 4 standard errors of their difference."""
    out = []
    for v in fresh:
        locked = lock.claims[v.claim.id]
        if v.evidence is None:
            continue
        for cell, old in zip(v.evidence.cells, locked.cells, strict=False):
            if not (math.isfinite(cell.mean) and math.isfinite(old["mean"])):
                continue
            half = (old["high"] - old["low"]) / 2 if math.isfinite(old["high"]) else 0.0
            tolerance = _tolerance(half, old.get("n", 0), NUMERICS == lock.numerics)
            tolerance += 1e-6 * max(1.0, abs(old["mean"]))
            if abs(cell.mean - old["mean"]) > tolerance:
                out.append(f"{v.claim.id} / {cell.label}: {cell.mean:.6g} vs locked {old['mean']:.6g} "
                           f"(tolerance {tolerance:.3g})")
    return out


def _tolerance(half: float, n: int, same_numerics: bool) -> float:
    if same_numerics or n < 2:
        return math.sqrt(2) * half
    from scipy.stats import t

    # half = t · SE; 4 SE of a difference of two independent means, never less than the same-numerics tolerance
    return math.sqrt(2) * half * max(1.0, 4 / float(t.ppf(0.975, n - 1)))


# with BENCH_LOCK_ROTATION=1, the papers of this commit's rotation (and every paper whose inputs changed) are the
# ones collected: the others are compared on the next commits, not skipped here
COMPARED = [s for s in PAPERS if os.environ.get("BENCH_LOCK_ROTATION") != "1" or _rotating(s)]


def test_the_rotation_shares_follow_the_longest_first_rule():
    costs = {"a": 7, "b": 5, "c": 4, "d": 3, "e": 3, "f": 2}
    # a, b, c open the three shares; d joins c (4), e joins b (5), f ties a and c at 7 and takes the first
    assert rotation_shares(list(costs), costs) == {"a": 0, "b": 1, "c": 2, "d": 2, "e": 1, "f": 0}


def test_every_paper_is_in_one_share_and_the_shares_cost_alike():
    costs = {slug: _lock_cost(slug) for slug in PAPERS}
    assert set(SHARES) == set(PAPERS) and set(SHARES.values()) == set(range(ROTATION))
    load = [sum(costs[s] for s in PAPERS if SHARES[s] == k) for k in range(ROTATION)]
    # the rule's bound: the dearest share exceeds the cheapest by at most the one paper that was added last to it
    assert max(load) - min(load) <= max(costs.values()), load


@pytest.mark.parametrize("slug", [pytest.param(s, marks=[pytest.mark.slow, pytest.mark.cost(_lock_cost(s))])
                                  for s in COMPARED])
def test_a_fresh_reproduction_gives_the_locked_verdicts(slug, tmp_path):
    found, drifted = _reproduce(slug, tmp_path, lambda cid: cid not in MACHINE_TIMED.get(slug, ()))
    assert found == {} and drifted == []


@pytest.mark.heavy
@pytest.mark.parametrize("slug", sorted(MACHINE_TIMED))
def test_the_machine_timed_claims_give_the_locked_verdicts(slug, tmp_path):
    found, _ = _reproduce(slug, tmp_path, lambda cid: cid in MACHINE_TIMED[slug])
    assert found == {}


def test_bench_claims_on_a_fresh_checkout_shows_the_reference_run(tmp_path):
    """No store at all (the default ./bench.db is missing): the locked verdicts, labelled, with the re-run command."""
    env = {**os.environ, "COLUMNS": "400"}
    env.pop("BENCH_DB_URL", None)
    proc = subprocess.run([sys.executable, "-m", "bench", "claims", "--paper", "cmdp-bobw"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lock = read_lock("cmdp-bobw")
    assert f"nothing stored: the reference run of {lock.date} at commit {lock.commit[:10]}" in proc.stdout
    assert "bench reproduce cmdp-bobw --scale cpu --controls" in proc.stdout
    assert verdicts(proc.stdout, lock.claims) == {cid: c.verdict for cid, c in lock.claims.items()}
    assert not (tmp_path / "bench.db").exists()  # showing the locks stores nothing


def test_a_lock_is_written_at_the_claims_own_seeds_only(tmp_path):
    proc = bench("reproduce", "cmdp-bobw", "--lock", "--seeds", "2", db=tmp_path / "x.db")
    assert proc.returncode == 2 and "--lock records the verdicts at each claim's own seeds" in proc.stderr
    proc = bench("reproduce", "cmdp-bobw", "--lock", "--runner", "ray", db=tmp_path / "x.db")
    assert proc.returncode == 2 and "--lock runs every cell here on one thread" in proc.stderr


@pytest.mark.slow
def test_bench_reproduce_with_controls_prints_the_locked_verdicts_and_resumes(tmp_path):
    """The CLI path of the lock: `bench reproduce --controls` runs the claims, their controls and their switched-off
    runs, prints the locked verdicts; `bench claims` prints them from the store; a second reproduce finds every cell
    done."""
    lock, db = read_lock("cmdp-bobw"), tmp_path / "cli.db"
    run = bench("reproduce", "cmdp-bobw", "--scale", "cpu", "--controls", "--workers", "2", db=db)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = {cid: c.verdict_under(NUMERICS) or c.verdict for cid, c in lock.claims.items()}
    assert verdicts(run.stdout, expected) == expected
    claims = bench("claims", "--paper", "cmdp-bobw", db=db)
    assert claims.returncode == 0 and verdicts(claims.stdout, expected) == expected
    assert "reference run" not in claims.stdout and "differs from the reference run" not in claims.stdout
    again = bench("reproduce", "cmdp-bobw", "--scale", "cpu", "--controls", db=db)
    assert "already done" in again.stderr and " done," not in again.stderr.split("cells:")[-1]


def test_a_cell_under_the_other_numerics_is_compared_as_a_new_draw():
    """Same numerics: √2 × the locked half-width (a bit-identical rerun). Other numerics: 4 standard errors of the
    difference of two independent means (half = t · SE), never tighter than the same-numerics tolerance."""
    from scipy.stats import t

    half = float(t.ppf(0.975, 19))                      # SE 1 at n = 20
    assert _tolerance(half, 20, True) == pytest.approx(math.sqrt(2) * half)
    assert _tolerance(half, 20, False) == pytest.approx(4 * math.sqrt(2))
    assert _tolerance(4.303, 3, False) == pytest.approx(math.sqrt(2) * 4.303)   # t(2) > 4: the same-numerics one
