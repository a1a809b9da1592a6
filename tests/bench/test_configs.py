from dataclasses import dataclass

import pytest

from bench.configs import build_config, config_dict, parse_overrides, split_overrides
from bench.errors import BenchError


@dataclass(frozen=True)
class Config:
    T: int = 100
    c: float = 1.0
    epsilon: float | None = None
    name: str = "x"
    flag: bool = False
    betas: tuple[float, ...] = (0.01, 0.05)


def test_overrides_are_typed_by_the_dataclass():
    values = parse_overrides(Config, {"T": "2000", "c": "1e-3", "epsilon": "0.5", "flag": "true",
                                      "betas": "0.1,0.2", "name": "007"}, "m")
    assert values == {"T": 2000, "c": 1e-3, "epsilon": 0.5, "flag": True, "betas": (0.1, 0.2), "name": "007"}
    assert parse_overrides(Config, {"epsilon": "none", "c": "3"}, "m") == {"epsilon": None, "c": 3.0}
    assert isinstance(parse_overrides(Config, {"c": "3"}, "m")["c"], float)


@pytest.mark.parametrize("key,text", [("T", "1.5"), ("T", "abc"), ("flag", "2"), ("c", "true"), ("betas", "a,b")])
def test_wrong_type_is_a_bench_error(key, text):
    with pytest.raises(BenchError, match=f"m.{key}="):
        parse_overrides(Config, {key: text}, "m")


def test_unknown_key_lists_the_valid_keys():
    with pytest.raises(BenchError) as info:
        parse_overrides(Config, {"cc": "1"}, "pcsgd")
    message = str(info.value)
    assert "'cc'" in message and "pcsgd" in message and "T: int" in message and "epsilon: float | none" in message
    assert "\n" not in message


def test_a_bare_key_the_task_has_points_to_the_task_key():
    """A bare `--set k=v` goes to the method; when the method lacks k but the command's task has it, the one-line
    error says so and gives the `--set task.k=v` to use (the key is never routed to the task silently)."""
    tasks = {"world": ["model", "dim"], "other": ["dim"]}
    with pytest.raises(BenchError) as info:
        parse_overrides(Config, {"model": "Qwen/Qwen2.5-1.5B-Instruct"}, "simplemix", tasks)
    message = str(info.value)
    assert message.startswith("unknown config key 'model' for simplemix; valid keys: T: int")
    assert message.endswith("; the task world has it: --set task.model=Qwen/Qwen2.5-1.5B-Instruct")
    assert "\n" not in message
    with pytest.raises(BenchError, match=r"; the tasks world, other have it: --set task.dim=20$"):
        parse_overrides(Config, {"dim": "20"}, "m", tasks)
    with pytest.raises(BenchError, match=r"--set 'task.model=a b'$"):            # quoted for the shell
        parse_overrides(Config, {"model": "a b"}, "m", tasks)
    with pytest.raises(BenchError) as info:                                     # no task has it: no pointer
        parse_overrides(Config, {"cc": "1"}, "m", tasks)
    assert "task." not in str(info.value)
    assert parse_overrides(Config, {"T": "5"}, "m", tasks) == {"T": 5}


def test_the_cli_entry_names_the_task_that_has_a_bare_key(registry):
    """bench.cells.entry_from_flag (the CLI's path): the preference methods have no `model` (π_SFT is the task's)."""
    from bench.cells import entry_from_flag

    with pytest.raises(BenchError, match=r"unknown config key 'model' for simplemix; valid keys: .*; the task "
                                         r"preference_world has it: --set task.model=Qwen/Qwen2.5-1.5B-Instruct$"):
        entry_from_flag(registry, "method", "simplemix", {"model": "Qwen/Qwen2.5-1.5B-Instruct"},
                        tasks=["preference_world"])
    with pytest.raises(BenchError, match=r"for dicesgd; valid keys: [^;]*$"):  # performative has no such key
        entry_from_flag(registry, "method", "dicesgd", {"model": "x"}, tasks=["performative", "no_such_task"])
    assert entry_from_flag(registry, "method", "simplemix", {"beta": "0.1"}, tasks=["nope"]).config == {"beta": 0.1}


def test_split_task_and_method_overrides():
    assert split_overrides(["c=1", "task.beta=0.05", "method.T=5"]) == ({"c": "1", "T": "5"}, {"beta": "0.05"})
    with pytest.raises(BenchError, match="key=value"):
        split_overrides(["beta"])


def test_build_and_dump_round_trip():
    config = build_config(Config, {"T": 5, "betas": [0.3]}, "m")
    assert config == Config(T=5, betas=(0.3,))
    assert config_dict(config) == {"T": 5, "c": 1.0, "epsilon": None, "name": "x", "flag": False, "betas": [0.3]}
    with pytest.raises(BenchError, match="expected int"):
        build_config(Config, {"T": "5"}, "m")


@pytest.mark.parametrize("key,text", [("c", "inf"), ("c", "-inf"), ("c", "nan"), ("c", "1e999"),
                                      ("epsilon", "Infinity"), ("betas", "0.1,nan"), ("betas", "[inf]")])
def test_non_finite_floats_are_refused(key, text):
    """A cell's canonical JSON (its run_key) cannot hold inf or nan: such a value is bad input."""
    with pytest.raises(BenchError, match="finite|expected float"):
        parse_overrides(Config, {key: text}, "toy")
    with pytest.raises(BenchError):
        build_config(Config, {"c": float(text) if key == "c" else float("inf")}, "toy")


def test_large_finite_floats_still_pass():
    assert parse_overrides(Config, {"c": "1e300", "epsilon": "-1e-300"}, "toy") == {"c": 1e300, "epsilon": -1e-300}
    with pytest.raises(BenchError, match="an integer of 401 digits"):  # beyond any float: refused, no OverflowError
        parse_overrides(Config, {"c": "1" + "0" * 400}, "toy")
    assert parse_overrides(Config, {"T": "1" + "0" * 30}, "toy") == {"T": 10**30}  # ints stay exact
