"""The two-city world's positive control: the latent oracle transfers, its shuffled null does not."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.urban import latent_oracle, source_mean
from tasks.urban import City, TwoCityProblem, score
from tasks.urban.two_city import Config, build


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_true_latents_transfer_and_their_shuffle_does_not(seed):
    """At the claims' world (150 and 120 regions): the aligned π beats the source mean by far more than the 5 % the
    positive control asks; π permuted among the target's regions does not beat it at all."""
    problem = build(Config(n_source=150, n_target=120), RunContext(seed=seed))
    mae = {name: score(problem, solve(problem, config, RunContext(seed=seed)))["mae"] for name, solve, config in [
        ("mean", source_mean.solve, source_mean.Config()),
        ("oracle", latent_oracle.solve, latent_oracle.Config()),
        ("null", latent_oracle.solve, latent_oracle.Config(shuffle=True))]}
    assert mae["oracle"] < 0.6 * mae["mean"]
    assert mae["null"] > 0.95 * mae["mean"]


def test_the_oracle_is_skipped_where_the_world_has_no_latents():
    rng = np.random.default_rng(0)
    city = City(od=np.ones((3, 3)), graph=np.zeros((3, 3)), features=rng.random((3, 2)), labels=rng.random((3, 3)))
    problem = TwoCityProblem(source=city, target=city, names=("bj", "xa"))
    assert "released city data has none" in latent_oracle.skip(problem, latent_oracle.Config())
