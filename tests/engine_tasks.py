"""Task functions for engine tests, importable by worker processes."""
from __future__ import annotations

import os
import time

KEPT: list[bytes] = []


def keep_a_model(i: int) -> int:
    """Like a text perturbation: the second call in a worker loads a 400 MB model and keeps it."""
    KEPT.append(b"x" if len(KEPT) != 1 else b"\1" * (400 * 2**20))
    time.sleep(0.6)
    return i


def slow_pid(i: int) -> int:
    """The worker's pid, slowly."""
    time.sleep(0.3)
    return os.getpid()
