"""A run's key no longer holds where a machine keeps its caches, and the instance seed has one name (issue 19).

`cache_dir` was a task Config field of seven tasks, so the run_key of a run depended on the cache folder of the
machine that ran it (two machines with different cache roots stored the same run twice); the cache root now lives
on the run context (bench.context: $BENCH_CACHE_DIR). And the seed that fixes a task's instance across run seeds had
three names: it is `world_seed` everywhere (was `data_seed` in performative, performative_strategic,
bon_categorical_lm, bon_random_reference and `instance_seed` in cmdp_stochastic, cmdp_adversarial). Neither changes
what a task builds, so every stored run stays valid; this migration gives each the key the code now computes for it.

Upgrade: every run of those tasks whose task_config holds `cache_dir` or an old seed name gets the config without
`cache_dir` and with `world_seed`, and the run_key and setting_key that bench.spec computes from it (exactly what the
store writes for a new run of that cell), so the runner finds it as the same cell and resumes instead of rerunning.
Its metrics and curves (which reference runs.run_key) and a lease on it move with it; its id, status, timings,
environment, log and everything else stay as they were.

Collisions: runs that differed only by their `cache_dir` (the same cell run on machines with different cache roots)
now have one key. One of them takes it: a done run before an unfinished one, then the newer task version, then the
one whose cache_dir was the former default, then the newest (largest id). The others are left untouched under their
old keys, configs and metrics (nothing is deleted); the same holds for a run whose new key some stored run already
has. Such a left-over run is a separate setting whose config names a `cache_dir` that no task reads any more: the
runner never asks for it, and the leaderboard shows it apart.

Downgrade: the reverse, for the runs of those tasks that lack the old fields: `world_seed` renamed back, and
`cache_dir` restored as the task's former default (a run first stored with another cache_dir comes back under the
default's key: the folder it named is not recoverable); collisions are resolved the same way.

Revision ID: 0006_run_identity
Revises: 0005_run_log
Create Date: 2026-12-05
"""

import json

import sqlalchemy as sa
from alembic import op

from bench.spec import Cell

revision = "0006_run_identity"
down_revision = "0005_run_log"
branch_labels = None
depends_on = None

# Frozen here (a migration never reads the tasks' current code): each task's former `cache_dir` default, and the
# former name of its instance seed.
FORMER_CACHE_DIRS = {
    "sft_calibration": "~/.cache/icml2025-bench/calibration",
    "hetero_vocab_pairs": "~/.cache/icml2025-bench/decoding",
    "concept_erasure": "~/.cache/icml2025-bench/erasure",
    "preference_world": "~/.cache/icml2025-bench/preference",
    "long_context_alignment": "~/.cache/icml2025-bench/preference",
    "alpacaeval": "~/.cache/icml2025-bench/preference",
    "refusal_finetune": "~/.cache/icml2025-bench/safety",
}
FORMER_SEEDS = {
    "performative": "data_seed",
    "performative_strategic": "data_seed",
    "bon_categorical_lm": "data_seed",
    "bon_random_reference": "data_seed",
    "cmdp_stochastic": "instance_seed",
    "cmdp_adversarial": "instance_seed",
}
SEED = "world_seed"
TASKS = sorted({*FORMER_CACHE_DIRS, *FORMER_SEEDS})
CHUNK = 500


def _as_dict(value):
    return json.loads(value) if isinstance(value, str) else value


def upgraded(task: str, config: dict) -> dict | None:
    """The task config as this revision's code writes it, or None when it has nothing to change."""
    new = dict(config)
    if task in FORMER_CACHE_DIRS:
        new.pop("cache_dir", None)
    old = FORMER_SEEDS.get(task)
    if old in new and SEED not in new:
        new[SEED] = new.pop(old)
    return new if new != config else None


def downgraded(task: str, config: dict) -> dict | None:
    """The task config as the previous revision's code wrote it, or None when it has nothing to change."""
    new = dict(config)
    if task in FORMER_CACHE_DIRS and "cache_dir" not in new:
        new["cache_dir"] = FORMER_CACHE_DIRS[task]
    old = FORMER_SEEDS.get(task)
    if old is not None and SEED in new and old not in new:
        new[old] = new.pop(SEED)
    return new if new != config else None


def _priority(row, config: dict) -> tuple:
    """Which of several runs that now share one key takes it (the largest)."""
    default_dir = config.get("cache_dir", FORMER_CACHE_DIRS.get(row.task)) == FORMER_CACHE_DIRS.get(row.task)
    return row.status == "done", row.task_version or 0, default_dir, row.id


def rekey(rewrite) -> dict:
    """Give each run of TASKS whose config `rewrite(task, config)` changes its new config, run_key and setting_key,
    moving its metrics, curves and lease along; collisions as the module says. Returns counts for the log."""
    connection = op.get_bind()
    runs = sa.Table("runs", sa.MetaData(), autoload_with=connection)
    metrics = sa.table("metrics", sa.column("run_key", sa.String))
    curves = sa.table("curves", sa.column("run_key", sa.String))
    leases = sa.table("leases", sa.column("run_key", sa.String))
    rows = connection.execute(sa.select(runs.c.id, runs.c.run_key, runs.c.method, runs.c.method_config, runs.c.task,
                                        runs.c.task_config, runs.c.seed, runs.c.hardware, runs.c.status,
                                        runs.c.task_version).where(runs.c.task.in_(TASKS))).all()
    kept_keys, claims = set(), {}  # keys of the runs left as they are; new key -> [(priority, id, old key, ...)]
    for row in rows:
        config = _as_dict(row.task_config)
        new = rewrite(row.task, config)
        if new is None:
            kept_keys.add(row.run_key)
            continue
        cell = Cell(row.method, row.task, int(row.seed), _as_dict(row.method_config), new, row.hardware)
        claims.setdefault(cell.run_key, []).append((_priority(row, config), row.id, row.run_key, cell.setting_key,
                                                    new))
    moves = []
    for key, claimants in claims.items():
        if key not in kept_keys:
            _, run_id, old_key, setting, config = max(claimants, key=lambda c: c[0])
            moves.append({"id": run_id, "old": old_key, "new": key, "setting": setting, "config": config})
    held = set(connection.execute(sa.select(leases.c.run_key)).scalars())
    for start in range(0, len(moves), CHUNK):
        chunk = moves[start:start + CHUNK]
        by_id = {m["id"]: m for m in chunk}
        # metrics and curves reference runs.run_key (no ON UPDATE CASCADE, and on PostgreSQL not deferrable): the
        # run is copied under its new key with the negated id first, its children moved to it, the old row
        # deleted (its cascade then finds nothing) and the copy given back the old id
        copies = []
        for row in connection.execute(sa.select(runs).where(runs.c.id.in_(list(by_id)))).mappings():
            move = by_id[row["id"]]
            copies.append({**row, "id": -row["id"], "run_key": move["new"], "setting_key": move["setting"],
                           "task_config": move["config"]})
        connection.execute(runs.insert(), copies)
        pairs = [{"old_key": m["old"], "new_key": m["new"]} for m in chunk]
        for child in (metrics, curves):
            connection.execute(child.update().where(child.c.run_key == sa.bindparam("old_key"))
                               .values(run_key=sa.bindparam("new_key")), pairs)
        leased = [p for p in pairs if p["old_key"] in held and p["new_key"] not in held]
        if leased:
            connection.execute(leases.update().where(leases.c.run_key == sa.bindparam("old_key"))
                               .values(run_key=sa.bindparam("new_key")), leased)
        connection.execute(runs.delete().where(runs.c.id.in_(list(by_id))))
        connection.execute(runs.update().where(runs.c.id.in_([-i for i in by_id])).values(id=-runs.c.id))
    return {"moved": len(moves), "left": sum(len(c) for c in claims.values()) - len(moves)}


def upgrade() -> None:
    rekey(upgraded)


def downgrade() -> None:
    rekey(downgraded)
