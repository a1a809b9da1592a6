"""How a driver writes to the store: leases on cells, batched saves, retries through outages.

Leases. A driver claims a cell before it runs it: a row in `leases` (run_key, owner, heartbeat)
that it renews while it lives. Another driver skips a cell leased by a live owner, so two drivers
over overlapping grids never run a cell twice. A lease whose heartbeat is older than the TTL
(its driver was killed, or its host is gone) is taken over, and so at once is one held by a
process of this host that no longer exists (a rerun right after kill -9). A claim also re-reads
the run, so a cell that another driver finished since this grid was planned is not run again.

No result is replaced by a worse one: without `force` a save never overwrites a stored `done`
(a late `timeout` from a second driver once replaced a `done` and zeroed its metrics); the late
record is dropped and counted.

Batches. Finished cells are saved in one transaction at most every 0.5 s or per 200 records,
not one transaction per run; the runners close the writer in `finally`, so Ctrl-C loses nothing.
The statements themselves (the batch save, the write lock it holds, the dialect inserts) are
bench/sql.py's, which the Store uses too.

Outages. A claim, save or heartbeat that fails because the database cannot be reached is
retried with backoff for `retry_s` (default 60 s; `BENCH_STORE_RETRY_S`, `--store-retry`); then
the driver stops with one line that says what is stored and how to resume. Nothing finished is
dropped while it waits, and a retried batch is idempotent (keyed by run_key), so nothing doubles.
"""

from __future__ import annotations

import errno
import math
import os
import re
import socket
import sys
import time
import uuid

from sqlalchemy import delete, select, update
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from bench.errors import BenchError, EnvironmentFault, mask_secrets
from bench.models import Lease
from bench.spec import RunRecord
from bench.sql import cell_keys, current_done, dialect_insert, keys_in, save_batch, write_lock

DEFAULT_RETRY_S = 60.0
DEFAULT_TTL_S = 60.0
FLUSH_S, FLUSH_RUNS = 0.5, 200


def retry_budget(value: float | None = None) -> float:
    """Seconds a store write keeps retrying through an outage: the flag, BENCH_STORE_RETRY_S, or 60."""
    raw = value if value is not None else os.environ.get("BENCH_STORE_RETRY_S")
    if raw is None:
        return DEFAULT_RETRY_S
    number = r"\s*[+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*"
    ascii_decimal = isinstance(raw, (int, float)) or re.fullmatch(number, str(raw))
    try:
        seconds = float(raw) if ascii_decimal else math.nan  # float() also reads "٣" and "1_0"
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise BenchError(f"store retry time {raw!r}: give a number of seconds >= 0 (default {DEFAULT_RETRY_S:g})")
    return seconds


def owner_id() -> str:
    return f"{socket.gethostname()[:80]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _dead_here(owner: str) -> bool:
    """True if `owner` names a process of this host that no longer exists."""
    host, _, rest = owner.partition(":")
    pid = rest.split(":")[0]
    if host != socket.gethostname()[:80] or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


_DISK_FULL = ("database or disk is full", "disk i/o error", "no space left on device", "could not extend file",
              "disk quota exceeded")
_NO_MEMORY = ("out of memory", "cannot allocate memory")


def environment_fault(exc: BaseException) -> str | None:
    """'disk full' or 'out of memory' when `exc` is that fault of the machine (SQLite's SQLITE_FULL, PostgreSQL's
    53100/53200, ENOSPC, EDQUOT, ENOMEM, MemoryError), else None."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, OSError) and not isinstance(exc, DBAPIError):
        return {errno.ENOSPC: "disk full", errno.EDQUOT: "disk full", errno.ENOMEM: "out of memory"}.get(exc.errno)
    if isinstance(exc, DBAPIError):
        orig = exc.orig
        state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
        text = str(orig).lower()
        if state == "53100" or any(w in text for w in _DISK_FULL):
            return "disk full"
        if state == "53200" or any(w in text for w in _NO_MEMORY):
            return "out of memory"
    return None


def is_outage(exc: BaseException, dialect: str) -> bool:
    """A failure of reaching the database (worth waiting for), not of the statement itself."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if dialect == "sqlite":  # a local file: only a lock held past busy_timeout is transient
        return isinstance(exc, OperationalError) and any(w in str(exc.orig) for w in ("locked", "busy"))
    return isinstance(exc, (OperationalError, InterfaceError))


def claim(engine, keys: list[str], owner: str, ttl_s: float, force: bool,
          versions: dict[str, int] | None = None) -> tuple[set[str], set[str]]:
    """Lease the free cells among `keys`: returns (claimed, already done). Others are leased elsewhere."""
    now = time.time()
    with engine.begin() as connection:
        write_lock(connection)
        for clause in keys_in(Lease.run_key, keys):
            connection.execute(delete(Lease).where(clause, Lease.heartbeat < now - ttl_s))
            held = connection.execute(select(Lease.run_key, Lease.owner).where(clause, Lease.owner != owner)).all()
            dead = [k for k, o in held if _dead_here(o)]
            if dead:
                connection.execute(delete(Lease).where(Lease.run_key.in_(dead)))
        done = set() if force else current_done(connection, keys, versions)
        free = [k for k in keys if k not in done]
        if free:
            insert = dialect_insert(connection)(Lease.__table__)
            connection.execute(insert.on_conflict_do_nothing(index_elements=["run_key"]),
                               [{"run_key": k, "owner": owner, "heartbeat": now, "acquired": now} for k in free])
        claimed: set[str] = set()
        for clause in keys_in(Lease.run_key, free):
            claimed.update(connection.execute(select(Lease.run_key).where(clause, Lease.owner == owner)).scalars())
    return claimed, done


def heartbeat(engine, owner: str) -> None:
    with engine.begin() as connection:
        connection.execute(update(Lease).where(Lease.owner == owner).values(heartbeat=time.time()))


def release(engine, owner: str) -> None:
    with engine.begin() as connection:
        connection.execute(delete(Lease).where(Lease.owner == owner))


def refresh_statistics(engine) -> None:
    """SQLite's planner reads sqlite_stat1: without it, a read of `runs` by setting goes through ix_runs_status, which
    matches nearly every row (the leaderboard's per-claim query at 100k runs: 70 ms instead of 5). A bounded ANALYZE
    (a few ms, `analysis_limit`) when a write session ends keeps the statistics current; PostgreSQL's autovacuum does
    the same there. Best effort: a store another process holds keeps its older statistics."""
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA analysis_limit=400")
            connection.exec_driver_sql("ANALYZE")
    except DBAPIError:
        pass


class Writer:
    """A driver's writes: claim cells, batch finished records, heartbeat, retry through outages.

    Use as a context manager; leaving it flushes what is pending and releases the leases left.
    """

    def __init__(self, store, runner: str, force: bool = False, ttl_s: float | None = None,
                 retry_s: float | None = None, flush_s: float | None = None, flush_runs: int | None = None,
                 versions: dict[str, int] | None = None):
        self.store, self.runner, self.force = store, runner, force
        self.versions = versions  # {run_key: task version now}: a done run of another version is claimed again
        self.ttl_s = ttl_s if ttl_s is not None else DEFAULT_TTL_S
        self.retry_s = retry_budget(retry_s if retry_s is not None else getattr(store, "retry_s", None))
        self.flush_s = flush_s if flush_s is not None else FLUSH_S  # read here: a test may lower them
        self.flush_runs = flush_runs if flush_runs is not None else FLUSH_RUNS
        self.owner = owner_id()
        self.pending: list[RunRecord] = []
        self._keys: list[str] = []  # run_keys of the pending records
        self._settings: list[str] = []  # and their setting keys
        self.leased: set[str] = set()
        self.saved = 0  # records written by this driver
        self.kept = 0  # records dropped because a done run was already stored
        self._last_flush = self._last_beat = time.monotonic()
        self._broken: str | bool = False  # "unreachable", "disk full", "out of memory" once stopped by a fault
        self._dialect = store.engine.dialect.name

    # -- leases
    def claim(self, keys: list[str]) -> tuple[set[str], set[str]]:
        """(claimed, done elsewhere) among keys; the rest are leased by a live driver."""
        if not keys:
            return set(), set()
        claimed, done = self._retrying(lambda: claim(self.store.engine, keys, self.owner, self.ttl_s, self.force,
                                                             self.versions))
        self.leased |= claimed
        return claimed, done

    def due_in(self) -> float | None:
        """Seconds until `tick` has something to do (a batch to flush, a heartbeat), or None."""
        now, waits = time.monotonic(), []
        if self.pending:
            waits.append(self._last_flush + self.flush_s - now)
        if self.leased:
            waits.append(self._last_beat + self.ttl_s / 4 - now)
        return max(0.0, min(waits)) if waits else None

    def tick(self) -> None:
        now = time.monotonic()
        if self.pending and now - self._last_flush >= self.flush_s:
            self.flush()
        if self.leased and now - self._last_beat >= self.ttl_s / 4:
            self._last_beat = now
            self._retrying(lambda: heartbeat(self.store.engine, self.owner))

    # -- saves
    def add(self, record: RunRecord) -> None:
        self.pending.append(record)
        key, setting = cell_keys(record.cell)
        self._keys.append(key)
        self._settings.append(setting)
        if len(self.pending) >= self.flush_runs or time.monotonic() - self._last_flush >= self.flush_s:
            self.flush()

    def flush(self) -> None:
        if not self.pending or self._broken:
            return
        batch = [(r, self.runner) for r in self.pending]
        environment_ids = self._retrying(lambda: [self.store.environment_id(r.machine) for r in self.pending])
        kept = self._retrying(lambda: save_batch(self.store.engine, batch, environment_ids, self.store._code_version,
                                                 self.force, self.owner, self._keys, self._settings))
        self.saved += len(set(self._keys)) - len(kept)
        self.kept += len(kept)
        self.leased -= set(self._keys)
        self.pending.clear()
        self._keys.clear()
        self._settings.clear()
        self._last_flush = time.monotonic()

    def close(self) -> None:
        try:
            self.flush()
            if self.saved and self.store.engine.dialect.name == "sqlite" and not self._broken:
                refresh_statistics(self.store.engine)
        finally:
            # best effort (a lease left behind expires after the TTL, and a rerun on this host takes over the leases
            # of its dead processes at once); not when the store is unreachable: that would wait for it again
            if self.leased and self._broken != "unreachable":
                try:
                    release(self.store.engine, self.owner)
                except DBAPIError:
                    pass
            self.leased.clear()

    def fault(self, exc: BaseException) -> EnvironmentFault | None:
        """The EnvironmentFault (exit 3) for a fault of the machine (disk full, out of memory; bench.errors), with
        what is stored and that a rerun resumes; None for any other error. Marks the writer broken: what is pending
        is not written again."""
        what = environment_fault(exc)
        if what is None:
            return None
        self._broken = self._broken or what
        return EnvironmentFault(self._stopped(f"{what} ({_first_line(exc)})", "free "
                                              + ("memory" if what == "out of memory" else "disk space") + " and "))

    def _stopped(self, why: str, advice: str = "") -> str:
        return (f"{why}: {self.saved} finished cells of this run are stored, {len(self.pending)} finished but not "
                f"saved will run again; {advice}rerun the same command to resume (cells done are skipped)")

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- outages
    def _retrying(self, action):
        started, delay, told = time.monotonic(), 0.1, False
        while True:
            try:
                return action()
            except (DBAPIError, OSError, MemoryError) as exc:
                fault = self.fault(exc)
                if fault is not None:
                    raise fault from None
                if not isinstance(exc, DBAPIError) or not is_outage(exc, self._dialect):
                    raise
                waited = time.monotonic() - started
                if waited >= self.retry_s:
                    self._broken = "unreachable"
                    raise EnvironmentFault(self._gave_up(exc)) from None
                if not told:
                    told = True
                    print(f"store unreachable ({_first_line(exc)}); retrying for up to {self.retry_s:g} s",
                          file=sys.stderr, flush=True)
                time.sleep(min(delay, self.retry_s - waited))
                delay = min(delay * 2, 5.0)

    def _gave_up(self, exc: BaseException) -> str:
        return (self._stopped(f"the store {self.store.url} was unreachable for {self.retry_s:g} s ({_first_line(exc)})")
                + ", with --store-retry SECONDS (or BENCH_STORE_RETRY_S) to wait longer")


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return mask_secrets((str(orig).strip().splitlines() or [type(orig).__name__])[0])
