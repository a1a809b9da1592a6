import math
import shutil
import subprocess

import pytest

from bench.errors import BenchError
from bench.spec import Cell, RunRecord
from leaderboard.export import render
from leaderboard.queries import config_label, leaderboard_rows, status_counts, summarize, summary_from_sums


def test_summary_matches_the_student_t_interval():
    s = summarize([1.0, 2.0, 3.0])
    half = 4.302652729749464 / math.sqrt(3)  # t_{0.975, 2} · s / √n with s = 1
    assert (s.n, s.mean, s.std) == (3, 2.0, 1.0)
    assert s.ci_low == pytest.approx(2 - half) and s.ci_high == pytest.approx(2 + half)
    one = summarize([5.0])
    assert (one.n, one.std, one.ci_low, one.ci_high) == (1, 0.0, 5.0, 5.0)


def test_config_label_lists_only_changes():
    assert config_label({"c": 1.0, "T": 5}, {"c": 1.0, "T": 10}) == "T=5"
    assert config_label({"c": 1.0}, {"c": 1.0}) == ""


def _save(store, method, seed, error, status="done", noise=0.1):
    cell = Cell(method, "toy_target", seed, {"noise": noise} if method == "toy_noisy" else {}, {"dim": 3, "scale": 1.0})
    store.save(RunRecord(cell, status, 2, {"error": error, "norm": 1.0} if status == "done" else {},
                         error=None if status == "done" else "Traceback\nValueError: bad"), runner="local")


@pytest.fixture
def filled(store):
    for seed, value in enumerate([1.0, 2.0, 3.0]):
        _save(store, "toy_noisy", seed, value)
    for seed, value in enumerate([0.5, 0.7]):
        _save(store, "toy_noisy", seed, value, noise=0.01)
    _save(store, "toy_raise", 0, 0.0, status="failed")
    return store


def test_leaderboard_ranks_by_primary_metric(filled, toy_registry):
    board = leaderboard_rows(filled, toy_registry)
    assert list(board) == [("toy_target", "error")]
    rows = board[("toy_target", "error")]
    assert [(r.config_label, r.n, r.mean) for r in rows] == [("noise=0.01", 2, pytest.approx(0.6)), ("", 3, 2.0)]
    assert rows[1].std == pytest.approx(1.0, rel=1e-12)  # from SQL sums of x, x², x³


def test_status_counts_and_failures(filled):
    rows, failures = status_counts(filled)
    assert {(r.method, r.status, r.n) for r in rows} == {("toy_noisy", "done", 5), ("toy_raise", "failed", 1)}
    assert [f.method for f in failures] == ["toy_raise"]


def test_exports(filled, toy_registry):
    csv_text = render(filled, toy_registry, "csv")
    assert csv_text.splitlines()[0].startswith("task,task_label,method,config_label,hardware,scale,metric,direction")
    assert len(csv_text.splitlines()) == 3
    import json

    data = json.loads(render(filled, toy_registry, "json"))
    assert data[0]["mean"] == pytest.approx(0.6) and data[1]["n"] == 3 and data[0]["direction"] == "↓"
    # one number of decimals per row, from the CI's half-width to two significant figures: t_{0.975,1}·0.1414/√2
    # = 1.27 -> 1 decimal; 0.6 is shown as 0.6, its std 0.14 as 0.1 and the CI clipped at the range's 0
    md = render(filled, toy_registry, "md")
    # the two CIs overlap: tied at rank 1 (=1); 2 seeds is low (fewer than 3)
    assert ("| toy_target | =1 | toy_noisy (noise=0.01) | error ↓ | 2 (low) | 0.6 | 0.1 | [0.0, 1.9] | cpu "
            "| cpu-scale |") in md
    tex = render(filled, toy_registry, "latex")
    assert r"toy\_noisy (noise=0.01)" in tex and r"\caption{" in tex and r"\label{tab:toy-target}" in tex
    assert tex.startswith("% needs \\usepackage{booktabs}") and tex.strip().endswith(r"\end{table}")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed here")
def test_the_latex_export_compiles(filled, toy_registry, tmp_path):
    table = render(filled, toy_registry, "latex", metrics=["all"])
    (tmp_path / "t.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                    + table + "\\end{document}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_exports_flag_identical_rows_and_take_metrics(filled, toy_registry):
    _save(filled, "toy_noisy", 0, 0.5, noise=0.02)
    _save(filled, "toy_noisy", 1, 0.7, noise=0.02)  # the same numbers as noise=0.01
    md = render(filled, toy_registry, "md", metrics=["error", "norm"])
    assert ("toy_noisy (noise=0.02) [= toy_noisy (noise=0.01)]" in md
            or "toy_noisy (noise=0.01) [= toy_noisy (noise=0.02)]" in md)
    assert "| norm ↑ |" in md and "| error ↓ |" in md
    assert render(filled, toy_registry, "csv", metrics=["all"]) == render(filled, toy_registry, "csv",
                                                                           metrics=["error", "norm", "spread"])
    with pytest.raises(BenchError, match="unknown metric.*nope.*allowed: error, norm, spread, all"):
        render(filled, toy_registry, "md", metrics=["nope"])


def test_intervals_stay_in_the_metrics_declared_range():
    # t interval of [1, 2, 3]: 2 ± 2.48 leaves [0, ∞): fewer than 5 seeds, so clipped at 0
    s = summarize([1.0, 2.0, 3.0], bounds=(0.0, None))
    assert (s.ci_low, s.ci_method) == (0.0, "t, clipped to range") and s.ci_high == pytest.approx(2 + 2.4841, abs=1e-3)
    # an accuracy near 1 over 6 seeds: the t interval would pass 1; the bootstrap stays in the values' range
    values = [1.0, 1.0, 0.99, 0.98, 1.0, 0.99]  # skewness -0.63: a t interval, [0.9848, 1.0019]
    assert summarize(values).ci_method == "t" and summarize(values).ci_high > 1
    bounded = summarize(values, bounds=(0.0, 1.0))
    assert bounded.ci_method == "bootstrap" and 0.98 <= bounded.ci_low <= bounded.ci_high <= 1.0
    assert summary_from_sums(6, sum(values), sum(v * v for v in values), sum(v ** 3 for v in values),
                             (0.0, 1.0)) is None  # the SQL path hands such a setting to summarize


def test_skewed_values_get_a_bootstrap_interval():
    values = [0.0] * 9 + [10.0]  # skewness 2.67: the t interval would reach below 0
    s = summarize(values)
    assert s.ci_method == "bootstrap" and s.mean == 1.0
    assert 0.0 <= s.ci_low < s.mean < s.ci_high <= 10.0
    assert s.ci_low == 0.0  # a resample of ten values without the outlier has probability 0.35
    assert summarize(values) == s  # seeded: the same values give the same interval
    assert summarize([1.0, 2.0, 3.0, 4.0, 5.0]).ci_method == "t"


def test_completeness_counts_each_status_and_the_missing(filled, toy_registry):
    from bench.cells import Entry, make_cell
    from leaderboard.queries import completeness

    keys = [make_cell(toy_registry, Entry("toy_noisy", {"noise": 0.1}), Entry("toy_target"), s).run_key
            for s in range(5)]
    keys.append(filled.runs(status="failed")[0].run_key)
    c = completeness(filled, keys + keys[:1])
    assert (c.total, c.done, c.failed, c.other, c.missing) == (6, 3, 1, 0, 2)
    assert c.fraction_done == 0.5


def test_mean_curve_over_runs(store):
    from leaderboard.queries import curve_names, mean_curve

    for seed, scale in enumerate((1.0, 3.0)):
        cell = Cell("toy_noisy", "toy_target", seed, {"noise": 0.1}, {"dim": 3, "scale": 1.0})
        store.save(RunRecord(cell, "done", 2, {"error": 1.0}, {"loss": [(1, scale), (2, 2 * scale), (3, 9.0)]}),
                   runner="local")
    keys = [r.run_key for r in store.runs()]
    steps, mean, std = mean_curve(store, keys, "loss")
    assert list(steps) == [1, 2, 3] and list(mean) == [2.0, 4.0, 9.0] and list(std) == [1.0, 2.0, 0.0]
    assert curve_names(store, keys) == ["loss"]


def test_tasks_with_runs_are_those_with_a_done_run(store):
    from leaderboard.queries import tasks_with_runs

    def save(task: str, seed: int, status: str) -> None:
        store.save(RunRecord(Cell("toy_noisy", task, seed, {}, {}), status, 1, {"error": 1.0}), runner="local")

    assert tasks_with_runs(store) == []
    save("zeta", 0, "failed")
    save("alpha", 0, "timeout")
    assert tasks_with_runs(store) == []
    for seed, status in enumerate(["failed", "skipped", "done", "failed"], start=1):
        save("zeta", seed, status)
    save("alpha", 1, "done")
    save("beta", 0, "failed")
    assert tasks_with_runs(store) == ["alpha", "zeta"]


def test_runs_table_filters_and_run_detail(filled):
    from leaderboard.queries import run_detail, runs_table

    assert len(runs_table(filled)) == 6
    failed = runs_table(filled, status="failed")
    assert [r["method"] for r in failed] == ["toy_raise"]
    assert runs_table(filled, method="toy_noisy'; DROP TABLE runs; --") == []  # bound, not spliced
    detail = run_detail(filled, failed[0]["run_key"])
    assert "ValueError: bad" in detail["run"]["error"] and detail["environment"]["python"].startswith("3.")
    assert run_detail(filled, "0" * 64) is None
    assert len(runs_table(filled)) == 6


def test_leaderboard_filters_by_hardware_and_seeds(filled, toy_registry):
    assert leaderboard_rows(filled, toy_registry, hardware="cuda") == {}
    rows = leaderboard_rows(filled, toy_registry, min_seeds=3)[("toy_target", "error")]
    assert [r.n for r in rows] == [3]


@pytest.mark.parametrize("seed", range(5))
def test_sql_sums_give_the_same_interval_as_the_values(seed):
    import numpy as np

    from leaderboard.queries import summary_from_sums

    x = np.random.default_rng(seed).normal(3.0, 0.5, size=12)
    direct, sums = summarize(x), summary_from_sums(len(x), x.sum(), (x**2).sum(), (x**3).sum())
    if direct.ci_method == "bootstrap":  # a skewed sample (seed 1: g1 = −1.47): the caller fetches the values
        assert sums is None
        return
    assert sums.ci_method == direct.ci_method == "t"
    for field in ("mean", "std", "ci_low", "ci_high"):
        assert getattr(sums, field) == pytest.approx(getattr(direct, field), rel=1e-9)
    skewed = np.array([0.0] * 9 + [10.0])
    assert summary_from_sums(10, skewed.sum(), (skewed**2).sum(), (skewed**3).sum()) is None  # bootstrap needed


def test_migration_0002_backfills_the_setting_key(tmp_path):
    from alembic import command
    from sqlalchemy import create_engine, text

    from bench.errors import BenchError
    from bench.store import Store, _alembic_config, upgrade

    url = f"sqlite:///{tmp_path / 'v1.db'}"
    engine = create_engine(url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0001_initial")
        connection.execute(text(
            "INSERT INTO runs (run_key, method, method_config, task, task_version, task_config, seed, hardware, "
            "status, runner) VALUES ('k', 'toy_noisy', '{\"noise\": 0.1}', 'toy_target', 2, "
            "'{\"dim\": 3, \"scale\": 1.0}', 4, 'cpu', 'done', 'local')"))
    with pytest.raises(BenchError, match="bench db upgrade"):
        Store.open(url)
    upgrade(engine)
    with engine.connect() as connection:
        key = connection.execute(text("SELECT setting_key FROM runs")).scalar()
    expected = Cell("toy_noisy", "toy_target", 0, {"noise": 0.1}, {"dim": 3, "scale": 1.0}).setting_key
    assert key == expected and Store.open(url).count() == 1


def test_claim_cells_read_from_source_are_the_cells_that_run(registry):
    """The leaderboard builds every claim's cells from the configs read statically (Registry.full_config); they
    must have the run_keys of the cells `bench reproduce` builds through the Configs, for every claims file."""
    from leaderboard.claims import group_cells, load_paper

    groups = [g for slug in registry.papers() for claim in load_paper(registry, slug).claims for g in claim.groups]
    assert len(groups) > 100
    for group in groups:
        assert [c.run_key for c in group_cells(group, registry, 2)] == \
            [c.run_key for c in group_cells(group, registry, 2, check=True)], group.label()


SHOW_A_STORE = '''
import sys
from bench.models import MetricValue, Run
from bench.registry import Registry
from bench.store import Store
from leaderboard import claims, queries

url, registry = sys.argv[1], Registry.discover()
store = Store.open(url)
config = registry.full_config("task", "performative", {"beta": 0.05})
with store.engine.begin() as connection:
    connection.execute(Run.__table__.insert(), [dict(
        run_key=f"{seed:064x}", setting_key="s" * 64, method="pcsgd", method_config=registry.full_config("method", "pcsgd", {"c": 0.5}),
        task="performative", task_version=1, task_config=config, seed=seed, hardware="cpu", status="done",
        runner="local") for seed in range(3)])
    connection.execute(MetricValue.__table__.insert(), [dict(run_key=f"{seed:064x}", name="final_gap", value=seed + 1.0)
                                                        for seed in range(3)])
board = queries.leaderboard_rows(store, registry)
overview = claims.overview(store, registry)
markers = claims.paper_markers(registry, "performative")
print([(r.task_label, r.config_label, r.n, r.mean) for rows in board.values() for r in rows])
print(len(overview), sum(sum(o.counts.values()) for o in overview), len(markers))
print(sorted(m for m in sys.modules if m.split(".")[0] in ("methods", "tasks")))
'''  # noqa: E501


def test_the_leaderboard_imports_no_method_or_task_module(tmp_path):
    """Ranking, config labels, the papers' verdicts and markers: all from the registry's static reading."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", SHOW_A_STORE, f"sqlite:///{tmp_path / 'bench.db'}"], cwd=root,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "[('beta=0.05', 'c=0.5', 3, 2.0)]"
    papers, claims, markers = map(int, out[1].split())
    assert papers >= 19 and claims > 200 and markers > 0
    assert out[2] == "[]"


# Like with like (issue 42): a hand-made performative store, its numbers computable by hand. The family's methods
# share T, sigma, epsilon and delta, so each horizon is its own comparison group.
T_975 = {2: 4.302652729749464, 3: 3.182446305284263}  # t_{0.975, n-1} for n = 3, 4


def _save_gap(store, registry, method, values, T=100_000, hardware="cpu"):
    config = registry.full_config("method", method, {"T": T})
    task = registry.full_config("task", "performative", {})
    for seed, value in enumerate(values):
        store.save(RunRecord(Cell(method, "performative", seed, config, task, hardware), "done", 1.0,
                             {"final_gap": value}), runner="local")


@pytest.fixture
def horizons(store, registry):
    """T = 1e5: sgd (4 seeds), pcsgd (3, its CI overlaps sgd's), dicesgd (3, far behind); T = 2000: a 2-seed pcsgd
    pilot better than them all, and one sgd seed; T = 500: a 3-seed dicesgd run on another runner's hardware."""
    _save_gap(store, registry, "sgd", [10.0, 11.0, 12.0, 11.0])
    _save_gap(store, registry, "pcsgd", [10.5, 11.5, 12.5])
    _save_gap(store, registry, "dicesgd", [20.0, 21.0, 22.0])
    _save_gap(store, registry, "pcsgd", [1.0, 2.0], T=2000)
    _save_gap(store, registry, "sgd", [0.5], T=2000)
    _save_gap(store, registry, "dicesgd", [5.0, 5.5, 6.0], T=500, hardware="ray-cpu")
    return store


def test_shared_fields_are_those_every_method_of_the_family_declares(registry, toy_registry):
    from leaderboard.queries import shared_fields

    assert shared_fields(registry, "performative") == ("T", "delta", "epsilon", "sigma")
    assert shared_fields(toy_registry, "toy_target") == ()  # toy_raise shares nothing with toy_noisy
    assert shared_fields(registry, "no_such_task") == ()


def test_runs_are_ranked_only_within_their_configuration_with_ties_sharing_a_rank(horizons, registry):
    board = leaderboard_rows(horizons, registry, task="performative")
    assert list(board) == [("performative · T=100000", "final_gap"), ("performative · T=2000", "final_gap"),
                           ("performative · T=500", "final_gap")]
    full = board[("performative · T=100000", "final_gap")]
    assert [(r.method, r.n, r.rank, r.tied, r.low_seeds) for r in full] == [
        ("sgd", 4, 1, True, False), ("pcsgd", 3, 1, True, True), ("dicesgd", 3, 3, False, True)]
    sgd, pcsgd, dicesgd = full
    std = math.sqrt(2 / 3)  # 10, 11, 12, 11 about 11
    assert sgd.mean == pytest.approx(11.0) and sgd.std == pytest.approx(std)
    half = T_975[3] * std / 2  # 1.299
    assert sgd.ci_low == pytest.approx(11 - half) and sgd.ci_high == pytest.approx(11 + half)
    assert pcsgd.ci_low == pytest.approx(11.5 - T_975[2] / math.sqrt(3))  # 9.016 < sgd's upper 12.299: tied
    assert dicesgd.ci_low == pytest.approx(21 - T_975[2] / math.sqrt(3))  # 18.52 > 13.98: rank 3 (1, 1, 3)
    assert {r.group for r in full} == {"T=100000"} and {r.most_seeds for r in full} == {4}
    pilot = board[("performative · T=2000", "final_gap")]
    assert [(r.method, r.n, r.mean, r.rank, r.tied, r.low_seeds) for r in pilot] == [
        ("sgd", 1, 0.5, None, False, True), ("pcsgd", 2, 1.5, 1, False, True)]  # one seed: never ranked
    ray = board[("performative · T=500", "final_gap")]
    assert [(r.method, r.hardware, r.rank, r.low_seeds) for r in ray] == [("dicesgd", "ray-cpu", 1, True)]


def test_a_single_configuration_keeps_one_untitled_group(filled, toy_registry):
    rows = leaderboard_rows(filled, toy_registry)[("toy_target", "error")]
    assert [(r.group, r.rank, r.tied, r.low_seeds) for r in rows] == [("", 1, True, True), ("", 1, True, False)]


def test_rank_rows_competition_ranks_ties_and_skips_references_and_single_seeds():
    from leaderboard.queries import BoardRow, rank_rows

    def row(method, n, mean, lo, hi, reference=""):
        return BoardRow("t", "", method, "", "cpu", "error", False, n, mean, 0.1, lo, hi, "t", setting_key=method,
                        reference=reference)

    ranked = rank_rows([row("ref", 3, 0.0, 0.0, 0.0, reference="exact"), row("a", 3, 1.0, 0.9, 1.1),
                        row("b", 3, 1.05, 1.0, 1.15), row("c", 1, 0.5, 0.5, 0.5), row("d", 3, 1.16, 1.12, 1.2),
                        row("e", 3, 2.0, 1.9, 2.1)])
    # d overlaps b but not a (the rank's first): a new rank, 4th placed
    assert [(r.method, r.rank, r.tied) for r in ranked] == [("ref", None, False), ("a", 1, True), ("b", 1, True),
                                                             ("c", None, False), ("d", 3, False), ("e", 4, False)]


def test_exports_carry_the_group_rank_tie_and_low_seed_marks(horizons, registry):
    import csv
    import io
    import json

    records = json.loads(render(horizons, registry, "json", task="performative"))
    assert [(r["group"], r["method"], r["rank"], r["tied"], r["low_seeds"], r["n"]) for r in records] == [
        ("T=100000", "sgd", 1, True, False, 4), ("T=100000", "pcsgd", 1, True, True, 3),
        ("T=100000", "dicesgd", 3, False, True, 3), ("T=2000", "sgd", None, False, True, 1),
        ("T=2000", "pcsgd", 1, False, True, 2), ("T=500", "dicesgd", 1, False, True, 3)]
    assert records[0]["mean"] == pytest.approx(11.0)
    rows = list(csv.DictReader(io.StringIO(render(horizons, registry, "csv", task="performative"))))
    assert [(r["group"], r["rank"], r["tied"], r["low_seeds"]) for r in rows[:2]] == [
        ("T=100000", "1", "True", "False"), ("T=100000", "1", "True", "True")]
    markdown = render(horizons, registry, "md", task="performative").splitlines()
    assert markdown[2].startswith("| performative · T=100000 | =1 | sgd | final_gap ↓ | 4 |")
    assert "| performative · T=2000 | — | sgd" in markdown[5] and "| 1 (low) |" in markdown[5]
    latex = render(horizons, registry, "latex", task="performative")
    assert r"performative $\cdot$ T=2000 & 1 & pcsgd" in latex
