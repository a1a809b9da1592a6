"""The analytical formula: its values and its error against the exact KL."""

import math

import pytest

from methods.best_of_n import bon_formula

from ._util import continuous, problem, random_references, run


@pytest.mark.parametrize("n, value", [(1, 0.0), (2, 0.1931), (16, 1.8351), (64, 3.1745), (256, 4.5491),
                                      (1024, 5.9324), (10, 1.4026), (100, 3.6152)])
def test_values(n, value):
    result, _, _ = run(bon_formula, continuous(n))
    assert result.kl == pytest.approx(value, abs=1e-4)
    assert result.win_rate == n / (n + 1)


def test_formula_overestimates_everywhere():
    for probs, rewards in random_references(200):
        for n in (2, 16, 256):
            _, scores, _ = run(bon_formula, problem(probs, n, rewards))
            assert scores["error_to_exact"] >= -1e-12
            assert scores["error_to_exact"] == pytest.approx(scores["gap_to_formula_bound"], abs=1e-15)
            assert scores["win_rate_advantage"] >= -1e-12


def test_binary_error_grows_without_bound():
    errors = [run(bon_formula, problem([1, 1], n))[1]["abs_error_to_exact"] for n in (10, 100, 1000, 10_000)]
    assert errors == sorted(errors)
    assert errors[-1] == pytest.approx(math.log(10_000) - 0.9999 - math.log(2), abs=1e-9)
