"""The options several commands share, and the number types they read (ASCII digits only)."""

import os
import re
from enum import StrEnum
from typing import Annotated

import typer
from typer import _click as click  # typer vendors click: its own ParamTypes, for click_type


class _AsciiInt(click.types.IntParamType):
    """An integer written in ASCII digits (click's own int() also takes "٣" and "1_000")."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):
            self.fail(f"{value!r} is not a valid integer: give ASCII digits 0-9", param, ctx)
        return super().convert(value, param, ctx)


class _AsciiFloat(click.types.FloatParamType):
    """A number written in ASCII decimal (click's own float() also takes "٣.5" and "1_0"); inf and nan are read, to
    be refused by the command's own check."""

    def convert(self, value, param, ctx):
        number = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)"
        if isinstance(value, str) and not re.fullmatch(rf"\s*(?:{number})\s*", value, re.IGNORECASE):
            self.fail(f"{value!r} is not a valid float: give an ASCII decimal number such as 2.5", param, ctx)
        return super().convert(value, param, ctx)


ASCII_INT, ASCII_FLOAT = _AsciiInt(), _AsciiFloat()

DbOption = Annotated[str | None, typer.Option("--db", envvar="BENCH_DB_URL",
                                              help="SQLAlchemy URL of the store (default sqlite:///bench.db).")]
StoreRetryOption = Annotated[float | None, typer.Option(
    "--store-retry", envvar="BENCH_STORE_RETRY_S", click_type=ASCII_FLOAT,
    help="Seconds saves retry while the store is unreachable (default 60).")]
SetOption = Annotated[list[str] | None,
                      typer.Option("--set", help="Override a config field: key=value (method) or task.key=value.")]
WorkersOption = Annotated[int, typer.Option(help="Worker processes.", click_type=ASCII_INT)]
TimeoutOption = Annotated[float | None, typer.Option(help="Hard limit per cell, seconds.", click_type=ASCII_FLOAT)]
MaxCellsOption = Annotated[int, typer.Option("--max-cells", click_type=ASCII_INT,
                                             help="Refuse a grid of more cells than this (counted before any is "
                                                  "built).")]
ForceOption = Annotated[bool, typer.Option(help="Rerun cells already done.")]
VerboseOption = Annotated[bool, typer.Option("--verbose", help="Show the libraries' own INFO and WARNING lines (Ray, "
                                                              "Streamlit, Uvicorn); quiet by default.")]
AllowCpuOption = Annotated[bool, typer.Option("--allow-cpu", help="Run cells that name hub models on hardware cpu "
                                                                   "(downloads them and trains them on the CPU).")]
MetricOption = Annotated[list[str] | None, typer.Option(
    "--metric", help="A metric to rank by (repeatable), or all: every metric the runs stored (default: the family's "
                     "primary metric).")]


class Isolation(StrEnum):
    worker = "worker"
    cell = "cell"


IsolationOption = Annotated[Isolation, typer.Option(
    help="worker: each worker process runs cell after cell (a crashed or timed-out one is replaced); cell: a fresh "
         "process for every cell (always so for language-model and GPU cells).")]


def set_verbose(verbose: bool) -> None:
    """--verbose reaches the code that starts Ray or Streamlit (and the processes it starts) through the environment."""
    from bench.errors import VERBOSE_ENV

    if verbose:
        os.environ[VERBOSE_ENV] = "1"
