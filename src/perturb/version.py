"""The one place that holds perturb's version (read by ``perturb.__version__`` and setup.cfg)."""
from __future__ import annotations

__version__ = "0.2.0"
