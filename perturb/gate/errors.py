"""The gate's bad-input error, :class:`perturb.errors.GateInputError` (this name stays importable)."""
from __future__ import annotations

from ..errors import GateInputError  # noqa: F401
