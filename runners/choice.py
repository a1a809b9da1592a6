"""The runners by name: what `--runner NAME` picks."""

from __future__ import annotations

from bench.errors import BenchError
from runners.base import ChosenRunner, Settings
from runners.local import LocalRunner
from runners.ray import RayRunner

RUNNERS: dict[str, type[ChosenRunner]] = {"local": LocalRunner, "ray": RayRunner}


def choose(name: str, settings: Settings) -> ChosenRunner:
    """The runner `name` with the command's settings; a one-line error for an unknown name or a setting it refuses."""
    if name not in RUNNERS:
        raise BenchError(f"unknown runner {name!r}; allowed: {', '.join(RUNNERS)}")
    return RUNNERS[name].from_settings(settings)
