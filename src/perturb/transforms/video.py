"""``RandomPerturbation``: a seeded, per-sample visual corruption for training, over a clip or a batch.

An ``nn.Module`` without parameters when torch is installed (so it sits in ``nn.Sequential``
and moves with ``.to()`` as a no-op), a plain callable otherwise; picklable either way.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from .batch import BatchKind, check_batch, content_keys, render_batch
from .draws import KeyedDraws, Sampler, check_key, check_keys

try:                                   # torch is optional: numpy batches need none of it
    from torch.nn import Module as _Base
except ImportError:                    # pragma: no cover - exercised where torch is absent
    class _Base:                       # type: ignore[no-redef]
        """Stands in for ``torch.nn.Module``: calling the transform runs ``forward``."""

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self.forward(*args, **kwargs)


class RandomPerturbation(KeyedDraws, _Base):
    """Each sample gets a random op at a random severity with chance ``p``, drawn from
    (seed, epoch, key) only: ``t(batch, keys=ids)``, ``t.params(keys=ids)``, ``t.set_epoch(e)``.

    ``ops`` is a selection as bench reads it (``"suite:imagenet-c"``, ``"blur,jpeg"``,
    ``"contrast:kinetics-c"``); ``weights`` one weight per op (the order of :attr:`ops`) or
    ``{op: weight}``; ``severity`` an int, a (low, high) pair or weights per level.
    """

    def __init__(self, ops: str | Sequence[str] = "suite:msrvtt-p", *, severity: Any = (1, 5),
                 weights: Sequence[float] | Mapping[str, float] | None = None, p: float = 1.0,
                 seed: int = 0) -> None:
        super().__init__()
        self.sampler = Sampler.build(ops, "video", severity, weights, p, seed)
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

    def forward(self, batch: Any, keys: Any = None) -> Any:
        """A perturbed copy of ``batch`` (or of one clip): same type, layout, dtype and device.

        ``keys`` (one per sample: ints or strs, a list, array or tensor; a lone key for one clip)
        decides each sample's draw. Without keys, a sample's key is its content
        (:meth:`content_keys`): reproducible, but identical clips draw alike; pass sample ids.
        """
        x, kind = self.check(batch)
        if keys is None:
            keys = content_keys(x, kind)
        elif kind.single and (isinstance(keys, str) or getattr(keys, "shape", None) == ()
                              or not hasattr(keys, "__len__")):      # one key: 7, "a", a 0-d tensor
            keys = [check_key(keys.item() if hasattr(keys, "item") else keys)]
        out = self.shaped(render_batch(x, kind, self.params(check_keys(keys, len(x)))))
        return out[0] if kind.single else out
