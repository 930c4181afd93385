"""pytest plugin (entry point ``pytest11: perturb``): the ``perturb_robust`` fixture and its options."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Command-line defaults for robustness tests: subset size and seed."""
    group = parser.getgroup("perturb", "robustness tests (perturb)")
    group.addoption("--perturb-subset", type=int, default=None, metavar="N",
                    help="benchmark only N items in perturb_robust (deterministic subset)")
    group.addoption("--perturb-seed", type=int, default=0, metavar="S",
                    help="seed for the perturb_robust subset and perturbations (default 0)")


@pytest.fixture
def perturb_robust(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``assert_robust`` with its options' ``subset`` and ``seed`` defaulting to the command-line options."""
    from ..options import options_object
    from .robust import RobustOptions, assert_robust

    defaults = {"subset": request.config.getoption("--perturb-subset"),
                "seed": request.config.getoption("--perturb-seed")}

    def check(model: Any, dataset: Any, options: RobustOptions | None = None, **kwargs: Any) -> Any:
        given = options_object(options, RobustOptions, "perturb_robust")
        unset = {key: value for key, value in defaults.items() if getattr(given, key) is None}
        return assert_robust(model, dataset, replace(given, **unset), **kwargs)

    return check
