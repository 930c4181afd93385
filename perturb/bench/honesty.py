"""When numbers mean little: :mod:`perturb.honesty` (this name stays importable)."""
from __future__ import annotations

from ..honesty import (CHANCE_MARGIN, MONOTONE_SLACK, SATURATION, chance_levels, chance_of,  # noqa: F401
                       clean_flags, flags, gamma_above_one, hit_chance, non_monotone, run_label)
