"""Fixtures shared by several test modules."""
import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch on one thread for the module (the shared 2-core machine thrashes with more)."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
