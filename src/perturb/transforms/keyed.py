"""What every training transform shares: its :class:`~.draws.Sampler`, the epoch (set, or given per
call), the draws of keys, the steps a composed draw renders in, and the watch for a stale copy.

A DataLoader worker holds a copy of the transform; with ``persistent_workers=True`` that copy is
made once, so ``set_epoch`` on the main process never reaches it and, called without ``epoch=``,
it draws the first epoch again. The copy cannot know the main process's epoch, but it can see the
symptom: in a worker, a key drawn a second time under the same epoch. It then warns, once per
copy, and names ``epoch=``.
"""
from __future__ import annotations

import numbers
import sys
import warnings
from typing import Any, Mapping, Sequence

from .draws import Sampler, check_count, check_key, check_keys

Draw = Any          # a sample's draw: {"op", "severity", "seed"}, a list of those (composed), or None


def lone_key(keys: Any, single: bool = False) -> bool:
    """Whether ``keys`` is one key (7, "a", a 0-d array or tensor) rather than a sequence of them;
    for a single clip, anything without a length is taken as its one key (and checked as such)."""
    return isinstance(keys, (str, numbers.Integral)) or getattr(keys, "shape", None) == () or \
        (single and not hasattr(keys, "__len__"))


def one_key(key: Any) -> int | str:
    """A lone key (a 0-d array or tensor read as its value) checked as a sample key."""
    return check_key(key.item() if hasattr(key, "item") else key)


def step_lists(draws: Sequence[Draw], composed: bool) -> list[list[Mapping[str, Any] | None]]:
    """The draws as the passes that render them: pass j holds each sample's j-th step (None where a
    sample has fewer steps or was skipped), so a sample gets its ops in its drawn order. There is
    always one pass, so that a batch nothing is drawn for still comes back as a copy."""
    if not composed:
        return [list(draws)]
    depth = max((len(d) for d in draws if d is not None), default=1)
    return [[d[j] if d is not None and j < len(d) else None for d in draws] for j in range(depth)]


def _in_loader_worker() -> bool:
    """Whether this process is a torch DataLoader worker (torch is not imported to find out)."""
    data = sys.modules.get("torch.utils.data")
    return data is not None and data.get_worker_info() is not None


class KeyedDraws:
    """The draws of keys under an epoch: ``params``, ``set_epoch`` and the per-call epoch rule."""

    sampler: Sampler
    epoch: int = 0

    @property
    def ops(self) -> tuple[str, ...]:
        """The selected ops, in the order ``weights`` are given."""
        return self.sampler.ops

    def set_epoch(self, epoch: int) -> None:
        """Draw anew for ``epoch``; coming back to an epoch repeats its draws."""
        self.epoch = check_count("epoch", epoch)

    def params(self, keys: Any, epoch: int | None = None) -> Any:
        """Each key's draw in ``epoch`` (default: the one ``set_epoch`` gave), in the order of
        ``keys``: ``{"op", "severity", "seed"}``, or None when p skips the sample; with ``n`` above 1,
        the list of such steps in the order they apply. A lone key (``keys=7``) gives its one draw,
        as ``t(clip, keys=7)`` renders one clip."""
        e = self.epoch if epoch is None else check_count("epoch", epoch)
        if lone_key(keys):
            return self.sampler.draw(e, one_key(keys))
        return [self.sampler.draw(e, k) for k in check_keys(keys)]

    def call_draws(self, keys: list[int | str], epoch: int | None) -> list[Draw]:
        """The draws of one call's (checked) keys: under ``epoch`` when given, else under the set
        epoch, watching in a DataLoader worker for keys drawn again (see the module docstring)."""
        if epoch is not None:
            return self.params(keys, epoch)
        if _in_loader_worker() and not getattr(self, "_warned", False):
            self._watch(keys)
        return [self.sampler.draw(self.epoch, k) for k in keys]

    def _watch(self, keys: list[int | str]) -> None:
        """Record this copy's keys under its epoch; warn once when one comes again."""
        epoch, seen = getattr(self, "_seen", (None, set()))
        if epoch != self.epoch:
            seen = set()
        again = next((k for k in keys if k in seen), None)
        if again is None:
            seen.update(keys)
            self._seen = (self.epoch, seen)
            return
        self._warned, self._seen = True, (None, set())          # once per copy; the record freed
        warnings.warn(
            f"{type(self).__name__}: key {again!r} is drawn again at epoch {self.epoch} in this DataLoader "
            f"worker, so its draws repeat: a worker's copy of the transform does not see set_epoch on the "
            f"main process (persistent_workers=True keeps the first epoch's copy); pass the epoch with "
            f"each call, t(x, keys=..., epoch=epoch)", RuntimeWarning, stacklevel=4)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sampler.describe()}, epoch={self.epoch})"
