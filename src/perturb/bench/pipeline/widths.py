"""The one embedding width of a dual encoder's run, agreed before any row is cached.

Every row must have the width the model declares (an http server's ``GET /info``), else the
width its rows first agree on: two batches of one width, or rows an earlier run cached. A
first batch waits uncached until a second one agrees with it, so a model whose first reply is
wrong caches nothing; a batch of another width is refused with an error that names it, the
width expected and where that came from, and how to clear cached rows where they may be the
wrong ones.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Callable, Sequence

from ..adapters.protocol import BadEmbeddingsError


def batch_label(desc: str, ids: Sequence[str]) -> str:
    """A batch as an error names it: its embedding set and the ids of its rows."""
    span = ids[0] if len(ids) == 1 else f"{len(ids)} rows, {ids[0]} to {ids[-1]}"
    return f"{desc} [{span}]"


@dataclass
class _Basis:
    """Where the expected width came from."""

    width: int
    what: str                # the batch, the cached rows or the declaration
    modality: str | None     # None: declared by the model
    cached: bool             # rows of this width are in the cache


class WidthCheck:
    """Admits a dual encoder's batches of the run's one width; holds the first until confirmed."""

    def __init__(self, model_id: str, declared: int | None, cache_root: object | None) -> None:
        self.model_id, self.declared, self.cache_root = model_id, declared, cache_root
        self.basis = _Basis(declared, "the width the model declares", None, False) if declared else None
        self.modalities: dict[str, str] = {}          # modality -> a batch of it at the agreed width
        self._held: Callable[[], None] | None = None   # the first batch's save, until another agrees

    def admit(self, modality: str, width: int, what: str, save: Callable[[], None]) -> None:
        """Save a batch of ``width`` rows when it agrees with the run's width (the first batch
        waits for a second); else BadEmbeddingsError, and nothing of it is saved."""
        if self.basis is None:
            self.basis, self._held = _Basis(width, what, modality, False), save
            self.modalities[modality] = what
            return
        if width != self.basis.width:
            raise BadEmbeddingsError(self._conflict(modality, width, what, cached=False))
        self.flush()
        save()
        self.basis.cached = True
        self.modalities.setdefault(modality, what)

    def cached(self, modality: str, width: int, what: str) -> None:
        """Rows of ``width`` read back from the cache: they fix the width or must agree with it."""
        if self.basis is None:
            self.basis = _Basis(width, f"the rows cached for {what}", modality, True)
        elif width != self.basis.width:
            raise BadEmbeddingsError(self._conflict(modality, width, f"the rows cached for {what}", cached=True))
        else:
            self.flush()
            self.basis.cached = True
        self.modalities.setdefault(modality, what)

    def flush(self) -> None:
        """Save the held first batch (the run goes on without a disagreement, or ends)."""
        held, self._held = self._held, None
        if held is not None:
            held()
            if self.basis is not None:
                self.basis.cached = True

    def _conflict(self, modality: str, width: int, what: str, cached: bool) -> str:
        basis, held = self.basis, self._held is not None
        self._held = None                                     # nothing of a disputed pair is cached
        if basis.modality is None:
            said = f"{what} {'have' if cached else 'returned'} width {width}; expected {basis.width}, {basis.what}"
        elif modality not in self.modalities:
            mine, other = (what, width), (self.modalities[basis.modality], basis.width)
            text, video = (mine, other) if modality == "text" else (other, mine)
            said = (f"text and video widths differ: {text[0]} width {text[1]}, {video[0]} width {video[1]}; "
                    f"a dual encoder must embed both at one width for retrieval")
        elif held:
            said = (f"{what} returned width {width}, but {basis.what} returned width {basis.width} and no "
                    f"other batch agrees with either")
        else:
            said = f"{what} {'have' if cached else 'returned'} width {width}; expected {basis.width}, the width of {basis.what}"
        kept = ("the cached rows are not used" if cached else
                "nothing of either batch is cached" if held else "nothing of this batch is cached")
        out = f"model {self.model_id}: {said}; {kept}"
        if self.cache_root is not None and (basis.cached or cached) and basis.modality is not None:
            wrong = f"the rows of width {width if cached else basis.width}"
            out += (f"; if {wrong} are the wrong ones, clear the cached rows with "
                    f"`perturb cache rm {shlex.quote(str(self.cache_root))} --model {shlex.quote(self.model_id)}` "
                    f"and re-run")
        return out
