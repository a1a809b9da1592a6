"""One torch thread while these tests run: the batched MLP fits are small, and two threads on a busy
two-core machine are many times slower than one. Restored afterwards."""

import pytest

from tests.helpers import one_torch_thread


@pytest.fixture(autouse=True, scope="package")
def _one_torch_thread():
    with one_torch_thread():
        yield
