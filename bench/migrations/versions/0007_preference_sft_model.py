"""The preference methods' `model` setting is gone: π_SFT is the task's `model` alone (issue 23, item 4).

Each preference method's Config had a field `model` ("" = the task's π_SFT, else a hub id or directory that became the
policy's start and the reference, while the task still sampled its baseline answers from its own π_SFT). It is
removed: the policy, the reference and the baseline answers now all come from the task's `model`
(`problem.sft_path`). A stored run whose method `model` was "" ran exactly what the same cell runs now, so this
migration gives it the key the code now computes for it; a run with a non-empty method `model` was another
experiment (its policy and reference came from that model, its baseline from the task's), which no cell of the
current code describes: it stays untouched under its old key and config (the leaderboard shows it apart, the runner
never asks for it, nothing is deleted).

Upgrade: every run of METHODS whose method_config holds `"model": ""` gets the config without it and the run_key and
setting_key that bench.spec computes from it (exactly what the store writes for a new run of that cell), so the
runner finds it as the same cell and resumes instead of rerunning. Its metrics and curves (which reference
runs.run_key) and a lease on it move with it; its id, status, timings, environment, log and everything else stay as
they were. METHODS is matched by name, whatever the task (the bandit world's runs of dpo, epa and ipo carried the
field too).

Collisions (as 0006 resolves them): a new key that a run left as it is already holds stays with that run; among
several runs that now share one key (not expected: they differed only by `"model": ""` against no `model`), a done
run before an unfinished one, then the newer task version, then the newest (largest id) takes it, and the others are
left untouched under their old keys.

Downgrade: the reverse, for the runs of METHODS whose method_config lacks `model`: `"model": ""` restored (the former
default), under the former key; runs kept at upgrade (a non-empty `model`) are already in the former form.

Revision ID: 0007_preference_sft_model
Revises: 0006_run_identity
Create Date: 2026-12-05
"""

import json

import sqlalchemy as sa
from alembic import op

from bench.spec import Cell

revision = "0007_preference_sft_model"
down_revision = "0006_run_identity"
branch_labels = None
depends_on = None

# Frozen here (a migration never reads the methods' current code): the methods whose Config had `model`
# (methods/preference/_common.py's TrainingSettings), and that field's former default.
METHODS = ("dpo", "dpo_mix_p", "epa", "hypo", "ipo", "logo", "sft", "simplemix", "simpo")
FIELD, FORMER_DEFAULT = "model", ""
CHUNK = 500


def _as_dict(value):
    return json.loads(value) if isinstance(value, str) else value


def upgraded(config: dict) -> dict | None:
    """The method config as this revision's code writes it, or None when the run stays as it is (no `model`, or a
    non-empty one: another experiment)."""
    if config.get(FIELD, None) != FORMER_DEFAULT:
        return None
    return {k: v for k, v in config.items() if k != FIELD}


def downgraded(config: dict) -> dict | None:
    """The method config as the previous revision's code wrote it (`model` first, as the Config declared it), or None
    when it has one already."""
    if FIELD in config:
        return None
    return {FIELD: FORMER_DEFAULT, **config}


def _priority(row) -> tuple:
    """Which of several runs that now share one key takes it (the largest)."""
    return row.status == "done", row.task_version or 0, row.id


def rekey(rewrite) -> dict:
    """Give each run of METHODS whose method config `rewrite(config)` changes its new config, run_key and setting_key,
    moving its metrics, curves and lease along; collisions as the module says. Returns counts for the log."""
    connection = op.get_bind()
    runs = sa.Table("runs", sa.MetaData(), autoload_with=connection)
    metrics = sa.table("metrics", sa.column("run_key", sa.String))
    curves = sa.table("curves", sa.column("run_key", sa.String))
    leases = sa.table("leases", sa.column("run_key", sa.String))
    rows = connection.execute(sa.select(runs.c.id, runs.c.run_key, runs.c.method, runs.c.method_config, runs.c.task,
                                        runs.c.task_config, runs.c.seed, runs.c.hardware, runs.c.status,
                                        runs.c.task_version).where(runs.c.method.in_(METHODS))).all()
    kept_keys, claims = set(), {}  # keys of the runs left as they are; new key -> [(priority, id, old key, ...)]
    for row in rows:
        new = rewrite(_as_dict(row.method_config))
        if new is None:
            kept_keys.add(row.run_key)
            continue
        cell = Cell(row.method, row.task, int(row.seed), new, _as_dict(row.task_config), row.hardware)
        claims.setdefault(cell.run_key, []).append((_priority(row), row.id, row.run_key, cell.setting_key, new))
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
                           "method_config": move["config"]})
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
