"""One verdict of the gate (a rule checked, or a comparison made): a table row and a test case."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

PASS, FAIL, INFO = "pass", "FAIL", "info"


@dataclass(frozen=True)
class Outcome:
    """A named verdict with display cells; ``message`` says why it failed."""

    name: str
    status: str                         # PASS, FAIL or INFO (shown, never fails the gate)
    cells: Mapping[str, str] = field(default_factory=dict)
    message: str = ""

    @property
    def failed(self) -> bool:
        return self.status == FAIL


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table cell; '—' for missing."""
    return "—" if value is None else f"{value:.{digits}f}"


def exit_status(outcomes: list[Outcome]) -> int:
    """0 when every outcome holds, 1 on any failure."""
    return int(any(o.failed for o in outcomes))
