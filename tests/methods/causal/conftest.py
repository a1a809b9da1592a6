"""One torch thread while these tests run: the batched MLP fits are small, and two threads on a busy
two-core machine are many times slower than one. Restored afterwards."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="package")
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
