"""SQLAlchemy 2 table definitions. Schema changes go through an Alembic migration."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from bench.spec import Status

RUN_STATUSES = tuple(Status)


class Base(DeclarativeBase):
    pass


class Environment(Base):
    __tablename__ = "environments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    git_sha: Mapped[str | None] = mapped_column(String(40))
    git_dirty: Mapped[bool | None] = mapped_column(Boolean)
    python: Mapped[str] = mapped_column(String(32))
    packages: Mapped[dict] = mapped_column(JSON)
    cpu: Mapped[str | None] = mapped_column(String(256))
    gpu: Mapped[str | None] = mapped_column(String(256))
    cuda: Mapped[str | None] = mapped_column(String(32))
    host: Mapped[str | None] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(DateTime)


class Run(Base):
    __tablename__ = "runs"
    # the leaderboard's aggregation reads runs in group order from it (migration 0008); its first column serves `task`
    __table_args__ = (Index("ix_runs_board", "task", "status", "setting_key", "method", "hardware", "run_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_key: Mapped[str] = mapped_column(String(64), unique=True)
    setting_key: Mapped[str | None] = mapped_column(String(64), index=True)  # the run_key without the seed
    method: Mapped[str] = mapped_column(String(128), index=True)
    method_config: Mapped[dict] = mapped_column(JSON)
    task: Mapped[str] = mapped_column(String(128))
    task_version: Mapped[int] = mapped_column(Integer)
    task_config: Mapped[dict] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(Integer)
    hardware: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), index=True)
    error: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    wall_s: Mapped[float | None] = mapped_column(Float)
    cpu_s: Mapped[float | None] = mapped_column(Float)  # the process's CPU seconds, every thread
    peak_mem_mb: Mapped[float | None] = mapped_column(Float)
    runner: Mapped[str] = mapped_column(String(32))
    code_version: Mapped[str | None] = mapped_column(String(64))
    environment_id: Mapped[int | None] = mapped_column(ForeignKey("environments.id"))
    log: Mapped[str | None] = mapped_column(Text)  # the libraries' warnings and messages during the run


class MetricValue(Base):
    __tablename__ = "metrics"
    __table_args__ = (UniqueConstraint("run_key", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_key: Mapped[str] = mapped_column(ForeignKey("runs.run_key", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    value: Mapped[float] = mapped_column(Float)


class CurvePoint(Base):
    __tablename__ = "curves"
    __table_args__ = (Index("ix_curves_run_key_name", "run_key", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_key: Mapped[str] = mapped_column(ForeignKey("runs.run_key", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    step: Mapped[int] = mapped_column(Integer)
    value: Mapped[float] = mapped_column(Float)


class Lease(Base):
    """A cell claimed by a running driver: others skip it while the heartbeat is fresh."""

    __tablename__ = "leases"

    run_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str] = mapped_column(String(128), index=True)  # host:pid:nonce of the driver
    heartbeat: Mapped[float] = mapped_column(Float)  # unix seconds, renewed while the driver lives
    acquired: Mapped[float] = mapped_column(Float)
