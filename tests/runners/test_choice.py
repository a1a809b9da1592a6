"""The runners by name (`--runner NAME`): each takes the protocol's arguments, the settings it uses, and refuses in one
line what it cannot honour."""

import inspect

import pytest

from bench.errors import BenchError
from runners.base import ChosenRunner, Settings
from runners.choice import RUNNERS, choose
from runners.local import LocalRunner
from runners.ray import RayRunner


def test_every_runner_by_name_is_called_the_same_way():
    shared = list(inspect.signature(ChosenRunner.__call__).parameters)
    assert set(RUNNERS) == {"local", "ray"}
    for runner in RUNNERS.values():
        assert list(inspect.signature(runner.__call__).parameters) == shared


def test_each_takes_the_settings_it_uses_and_refuses_what_it_cannot():
    settings = Settings(workers=3, threads=1, isolation="cell", address=None)
    assert choose("local", settings) == LocalRunner(workers=3, threads=1, isolation="cell")
    assert choose("ray", Settings(workers=3, address="auto")) == RayRunner(address="auto")
    assert LocalRunner.here and not RayRunner.here  # only the local runner pins a lock's thread count
    with pytest.raises(BenchError, match=r"^unknown runner 'slurm'; allowed: local, ray$"):
        choose("slurm", settings)
    with pytest.raises(BenchError, match=r"^--address is for --runner ray$"):
        choose("local", Settings(address="auto"))
