"""Shared fixtures. The whole suite runs offline: any socket connection outside loopback fails."""
from __future__ import annotations

import os
import socket

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_LOOPBACK = ("127.", "localhost", "::1", "0.0.0.0")
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address) -> bool:
    if isinstance(address, (str, bytes)):      # AF_UNIX paths
        return True
    host = str(address[0]) if address else ""
    return host.startswith(_LOOPBACK)


def _guarded(real):
    def connect(self, address):
        if not _is_local(address):
            raise OSError(f"network access is forbidden in the test suite (tried {address!r})")
        return real(self, address)
    return connect


@pytest.fixture(autouse=True, scope="session")
def no_network():
    """Make every non-loopback socket connection fail, for the whole session."""
    socket.socket.connect = _guarded(_real_connect)
    socket.socket.connect_ex = _guarded(_real_connect_ex)
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex


@pytest.fixture
def torch_kernels_on_cpu():
    """Torch clips on the CPU render with the torch kernels, as on a GPU: the code under test in
    the torch-kernel tests (by default a CPU tensor renders through the numpy kernels)."""
    from perturb.video.host import torch_kernels_on_cpu as torch_kernels

    with torch_kernels():
        yield
