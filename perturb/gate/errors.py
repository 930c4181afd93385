"""The gate's bad-input error (the CLI turns it into exit status 2) and its 'did you mean' message."""
from __future__ import annotations

import difflib
from typing import Iterable

from ..errors import PerturbError
from ..registry import normalize


class GateInputError(PerturbError, ValueError):
    """An unreadable results file, an unknown metric, name or schema version, or a malformed rule."""


def unknown(kind: str, name: str, valid: Iterable[str]) -> GateInputError:
    """An error for an unknown ``kind`` naming the closest valid names and listing them all."""
    pool = list(dict.fromkeys(valid))
    keys = {normalize(v): v for v in pool}
    close = difflib.get_close_matches(normalize(name), list(keys), n=3, cutoff=0.6)
    msg = f"unknown {kind} {name!r}"
    if close:
        msg += f"; did you mean {', '.join(repr(keys[k]) for k in close)}?"
    return GateInputError(f"{msg} Expected one of: {', '.join(pool)}")
