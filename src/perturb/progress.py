"""Progress bars: tqdm on a terminal; in a log (stderr not a terminal) only the outer bars, one at
a time at the first line and updated rarely, so no cursor movement (``ESC[A``) lands in the file."""
from __future__ import annotations

import sys
from typing import Any, Iterable

from .listing import to_terminal

LOG_INTERVAL = 10.0         # seconds between a bar's updates when stderr is not a terminal


def bar(iterable: Iterable[Any] | None = None, *, total: int | None = None, desc: str = "", unit: str = "it",
        enabled: bool = True, nested: bool = False, leave: bool = True, **options: Any) -> Any:
    """A tqdm bar; a ``nested`` one (drawn inside another, then erased) only on a terminal."""
    from tqdm.auto import tqdm

    terminal = to_terminal(sys.stderr)               # where bars are drawn
    if not terminal:
        options.update(mininterval=LOG_INTERVAL, position=0, dynamic_ncols=False)
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave and not nested,
                disable=not enabled or (nested and not terminal), **options)
