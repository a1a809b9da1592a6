"""One torch thread for this family's tests: its batched ops are small, and on a shared 2-core
machine torch's thread pool made them 10-100x slower."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
