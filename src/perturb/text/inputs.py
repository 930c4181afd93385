"""Input checks at the text and contrast API boundary: one caption, or a sequence of captions.

Every perturbation benefits from the checks done here: a non-str is a
:class:`~perturb.errors.CaptionTypeError` (a ValueError and a TypeError), and a caption that is not
valid Unicode (a lone surrogate such as ``"\\ud800"``, which spaCy and the encoders cannot handle)
is a ValueError naming the caption.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..errors import CaptionTypeError, check_unicode


def check_caption(caption: Any, where: str = "") -> str:
    """``caption`` itself when it is a str of valid Unicode; a ValueError otherwise."""
    if not isinstance(caption, str):
        raise CaptionTypeError(f"expected a caption as str{where}; got {type(caption).__name__}")
    return check_unicode(caption, f"caption{where}")


def check_captions(captions: Iterable[str]) -> list[str]:
    """A list of the captions, each checked; a lone str is refused (it would be split into
    characters), as is anything that is not an iterable of str."""
    if isinstance(captions, (str, bytes)):
        raise CaptionTypeError(f"expected a sequence of captions (str), e.g. a list; got a single "
                               f"{type(captions).__name__} {captions[:40]!r}: wrap it in a list")
    try:
        items = list(captions)
    except TypeError:
        raise CaptionTypeError(f"expected a sequence of captions (str); got "
                               f"{type(captions).__name__}") from None
    return [check_caption(c, f" at index {i}") for i, c in enumerate(items)]
