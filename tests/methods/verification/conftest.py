"""One torch thread for this family's tests: its batched ops are small, and on a shared 2-core
machine torch's thread pool made them 10-100x slower."""

import pytest

from bench.numerics import torch_threads


@pytest.fixture(autouse=True)
def _one_torch_thread():
    with torch_threads(1):
        yield
