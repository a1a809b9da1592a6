import pytest
import torch

from bench.context import RunContext
from tasks.preference import preference_world


@pytest.fixture(scope="session")
def world():
    """The smallest preference_world (its tiny π_SFT is trained once and cached under ~/.cache)."""
    torch.set_num_threads(1)  # tiny models: one thread is fastest and leaves the other cores alone
    return preference_world.build(preference_world.Config(**preference_world.SMALLEST), RunContext(seed=0).for_task())
