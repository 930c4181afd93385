"""The results file the gate reads: :mod:`perturb.results` (this name stays importable)."""
from __future__ import annotations

from ..results import (DEFAULT_TIES, GAMMAS, KNOWN_SCHEMA_VERSIONS, RUN_KEYS, SUMMARY_KINDS,  # noqa: F401
                       Results, load_results, validate)
