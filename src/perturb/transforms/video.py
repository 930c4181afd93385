"""``RandomPerturbation``: a seeded, per-sample visual corruption for training, over a clip or a batch.

An ``nn.Module`` without parameters when torch is installed (so it sits in ``nn.Sequential``
and moves with ``.to()`` as a no-op), a plain callable otherwise; picklable either way.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from .batch import BatchKind, check_batch, content_keys, render_batch
from .draws import Sampler, check_keys
from .keyed import KeyedDraws, lone_key, one_key, step_lists

try:                                   # torch is optional: numpy batches need none of it
    from torch.nn import Module as _Base
except ImportError:                    # pragma: no cover - exercised where torch is absent
    class _Base:                       # type: ignore[no-redef]
        """Stands in for ``torch.nn.Module``: calling the transform runs ``forward``."""

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self.forward(*args, **kwargs)


class RandomPerturbation(KeyedDraws, _Base):
    """Each sample gets a random op (or ``n`` of them, in a drawn order) at a random severity with
    chance ``p``, drawn from (seed, epoch, key) only: ``t(batch, keys=ids, epoch=e)``,
    ``t.params(keys=ids, epoch=e)``, ``t.set_epoch(e)``.

    ``ops`` is a selection as bench reads it (``"suite:imagenet-c"``, ``"blur,jpeg"``,
    ``"contrast:kinetics-c"``); ``weights`` one weight per op (the order of :attr:`ops`) or
    ``{op: weight}``; ``severity`` an int, a (low, high) pair or weights per level; ``n`` the
    number of different ops per sample, an int or an inclusive (low, high) pair.
    """

    def __init__(self, ops: str | Sequence[str] = "suite:msrvtt-p", *, severity: Any = (1, 5),
                 weights: Sequence[float] | Mapping[str, float] | None = None, p: float = 1.0,
                 seed: int = 0, n: int | tuple[int, int] = 1) -> None:
        super().__init__()
        self.sampler = Sampler.build(ops, "video", severity, weights, p, seed, n)
        self.epoch = 0

    def check(self, batch: Any) -> tuple[Any, BatchKind]:
        """The input as a batch of clips (B, T, ...) plus how it came in (:func:`.batch.check_batch`)."""
        return check_batch(batch)

    def shaped(self, out: Any) -> Any:
        """The rendered batch of clips in the input's shape (a batch of clips: as it is)."""
        return out

    def content_keys(self, batch: Any) -> list[str]:
        """The keys used when ``keys`` is None: one digest per sample of its uint8 levels."""
        x, kind = self.check(batch)
        return content_keys(x, kind)

    def forward(self, batch: Any, keys: Any = None, epoch: int | None = None,
                return_params: bool = False) -> Any:
        """A perturbed copy of ``batch`` (or of one clip): same type, layout, dtype and device.

        ``keys`` (one per sample: ints or strs, a list, array or tensor; a lone key for one clip)
        decides each sample's draw. Without keys, a sample's key is its content
        (:meth:`content_keys`): reproducible, but identical clips draw alike; pass sample ids.
        ``epoch`` draws under that epoch for this call (default: the one ``set_epoch`` gave).
        With ``return_params=True`` the result is ``(output, params)``, the params as
        :meth:`params` gives them for these keys (one draw for one clip, else a list).
        """
        x, kind = self.check(batch)
        if keys is None:
            keys = content_keys(x, kind)
        elif kind.single and lone_key(keys, single=True):
            keys = [one_key(keys)]
        draws = self.call_draws(check_keys(keys, len(x)), epoch)
        out = x
        for step in step_lists(draws, self.sampler.composed):     # one pass per step, in drawn order
            out = render_batch(out, kind, step)
        out = self.shaped(out)
        if kind.single:
            out, draws = out[0], draws[0]
        return (out, draws) if return_params else out
