import pytest

from bench.spec import Cell, canonical_json, run_key, validate_hardware


def test_run_key_ignores_dict_order_and_is_sha256():
    a = Cell("m", "t", 0, {"x": 1, "y": 2.0}, {"beta": 0.01})
    b = Cell("m", "t", 0, {"y": 2.0, "x": 1}, {"beta": 0.01})
    assert run_key(a) == run_key(b) == a.run_key
    assert len(a.run_key) == 64 and int(a.run_key, 16) >= 0
    assert a == b and len({a, b}) == 1


@pytest.mark.parametrize("change", [dict(seed=1), dict(hardware="cuda"), dict(method="n"), dict(task="u"),
                                    dict(method_config={"x": 1, "y": 2.5}), dict(task_config={"beta": 0.02})])
def test_any_field_changes_the_key(change):
    base = dict(method="m", task="t", seed=0, method_config={"x": 1, "y": 2.0}, task_config={"beta": 0.01})
    assert Cell(**base).run_key != Cell(**{**base, **change}).run_key


def test_canonical_json_rejects_nan_and_unwraps_numpy():
    import numpy as np

    assert canonical_json({"b": np.float64(0.5), "a": (1, 2)}) == '{"a":[1,2],"b":0.5}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_hardware_names():
    assert validate_hardware("cuda:a100") == "cuda:a100"
    for bad in ("gpu", "cuda:", "tpu:v4"):
        with pytest.raises(ValueError, match="allowed are cpu, cuda"):
            validate_hardware(bad)
