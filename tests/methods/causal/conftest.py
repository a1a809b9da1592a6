"""One torch thread while these tests run: the batched MLP fits are small, and two threads on a busy
two-core machine are many times slower than one. Restored afterwards."""

import pytest

from bench.numerics import torch_threads


@pytest.fixture(autouse=True, scope="package")
def _one_torch_thread():
    with torch_threads(1):
        yield
