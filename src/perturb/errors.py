"""Exception types shared across perturb."""
from __future__ import annotations


class PerturbError(Exception):
    """Base class of perturb's own errors."""


class UnknownPerturbationError(PerturbError, ValueError, KeyError):
    """A perturbation name that is not in the registry; the message lists the closest names."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class MissingResourceError(PerturbError, RuntimeError):
    """An optional resource (NLP model, WordNet, HF model) is absent; says how to install it."""


class CaptionTypeError(PerturbError, ValueError, TypeError):
    """A caption that is not a str, or captions that are not a sequence of str: a ValueError, as
    every bad input to perturb is, and a TypeError, as Python raises for a value of the wrong type."""


class NotApplicableError(PerturbError, ValueError):
    """A perturbation cannot apply to this input (raised only when strict=True)."""


class OptionsTypeError(PerturbError, TypeError, ValueError):
    """An options argument that is not the options object a function takes (a dict of keywords, say):
    a TypeError, as Python raises for a value of the wrong type, and a ValueError, as every bad input is."""


class PerFrameError(PerturbError, ValueError):
    """``per_frame`` asked of ops none of which takes it; ``takers`` names the ops that do."""

    def __init__(self, message: str, takers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.takers = tuple(takers)


class VideoReadError(PerturbError, ValueError):
    """A file that is not a readable video: no video stream, truncated, or not a video at all."""


class ImageReadError(PerturbError, ValueError):
    """A file that is not a readable image: missing, a folder, or not a format Pillow decodes."""


class UsageError(PerturbError):
    """Bad arguments or a malformed input file: the CLI prints the message and exits with status 2."""


class GateInputError(PerturbError, ValueError):
    """An unreadable or off-schema results file, an unknown metric or name, or a malformed rule
    (``perturb check``/``compare`` exit with status 2)."""


class PlacementError(PerturbError, ValueError):
    """Work that cannot be placed where it would run: a device option the machine or cluster cannot
    honour, or a scheduler that does not answer. Raised before any work; the CLI exits with status 2."""


def check_unicode(text: str, what: str) -> str:
    """``text`` itself when it encodes as UTF-8; else a ValueError naming ``what`` and the first bad
    character (a lone surrogate cannot be hashed, written or tokenised)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{what} {text!r} is not valid Unicode text: {e.reason} at position {e.start}") from None
    return text
