"""How perturb matches the names people type: case, spaces, dashes and underscores do not count,
and an unknown name is answered with the closest known ones ("did you mean").

Imports nothing else from perturb, so any layer may use it (the registry, the results contract).
"""
from __future__ import annotations

import difflib
import re
from typing import Iterable, Mapping


def normalize(name: str) -> str:
    """Case, space, dash and underscore insensitive key: 'Motion Blur' == 'motion_blur'."""
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def unknown_name(kind: str, name: str, spellings: Mapping[str, str], listed: Iterable[str], *,
                 n: int = 3, cutoff: float = 0.6, margin: float = 0.1) -> str:
    """The message for an unknown ``kind`` called ``name``: up to ``n`` closest names (``spellings``
    maps every accepted spelling to the name it stands for), those within ``margin`` of the closest
    one's similarity (a typo of one name is not answered with its distant cousins), then every
    name of ``listed``."""
    keys = {normalize(k): v for k, v in spellings.items()}
    typed = normalize(name)
    close = difflib.get_close_matches(typed, list(keys), n=n, cutoff=cutoff)
    if close:
        best = difflib.SequenceMatcher(None, typed, close[0]).ratio()
        close = [k for k in close if difflib.SequenceMatcher(None, typed, k).ratio() >= best - margin]
    suggestions = list(dict.fromkeys(keys[k] for k in close))
    msg = f"unknown {kind} {name!r}"
    if suggestions:
        return f"{msg}; did you mean {', '.join(repr(s) for s in suggestions)}? Expected one of: {', '.join(listed)}"
    return f"{msg}; expected one of: {', '.join(listed)}"
