"""Shared hypothesis settings: bounded example counts, no deadlines, derandomised under CI."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_BASE = settings(deadline=None, derandomize=bool(os.environ.get("CI")),
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])


def bounded(max_examples: int) -> settings:
    """At most ``max_examples`` examples, so the suite stays inside CI's time."""
    return settings(_BASE, max_examples=max_examples)
