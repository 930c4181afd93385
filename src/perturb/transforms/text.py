"""``RandomTextPerturbation``: a seeded, per-caption text perturbation for training.

The same rule as the video transform: each caption's draw (op, severity, seed) comes from
(seed, epoch, key) only, and its output equals ``perturb.text.apply(caption, op, severity,
seed=seed)``. Captions that drew the same parse-dependent op are parsed together (``nlp.pipe``).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..registry import REGISTRY
from ..text import apply_batch
from ..text.api import parse_batch, pipeline_key
from ..text.inputs import check_caption, check_captions
from .draws import Sampler, check_key, check_keys, group_params
from .keyed import KeyedDraws, step_lists


def default_text_ops() -> list[str]:
    """Every text perturbation that runs without a model (the default selection)."""
    return [s.name for s in REGISTRY.select("text") if not s.needs_model]


class RandomTextPerturbation(KeyedDraws):
    """Each caption gets a random text op (or ``n`` of them, in a drawn order) with chance ``p``,
    drawn from (seed, epoch, key): ``t(captions, keys=ids, epoch=e)``, ``t.params(keys=ids)``,
    ``t.set_epoch(e)``.

    ``ops`` is a selection (``"ChangeChar,Positional"``, names; default: every op that needs
    no model); ``severity`` (an int, a (low, high) pair or weights per level) applies to the
    ops that have levels, None keeps each op's default. Ops that need a model are refused.
    """

    def __init__(self, ops: str | Sequence[str] | None = None, *, severity: Any = None,
                 weights: Sequence[float] | Mapping[str, float] | None = None, p: float = 1.0,
                 seed: int = 0, n: int | tuple[int, int] = 1) -> None:
        self.sampler = Sampler.build(default_text_ops() if ops is None else ops, "text", severity,
                                     weights, p, seed, n)
        need = [op for op in self.sampler.ops if REGISTRY.get(op, "text").needs_model]
        if need:
            raise ValueError(f"{', '.join(need)} need a model, which RandomTextPerturbation does not "
                             f"load; select ops without one (the default)")
        self.epoch = 0

    def __call__(self, captions: str | Sequence[str], keys: Any = None, epoch: int | None = None,
                 return_params: bool = False) -> Any:
        """Perturbed captions (a list of str; a str for one caption). Without keys, a caption's
        key is its own text: reproducible, but equal captions draw alike; pass sample ids.
        ``epoch`` and ``return_params`` as for :class:`~.video.RandomPerturbation`."""
        if isinstance(captions, str):
            caption = check_caption(captions)
            texts, keys = [caption], [caption if keys is None else check_key(keys)]
        else:
            texts = check_captions(captions)
            keys = texts if keys is None else check_keys(keys, len(texts))
        draws = self.call_draws(keys, epoch)
        for step in step_lists(draws, self.sampler.composed):
            texts = self._render(texts, step)
        if isinstance(captions, str):
            texts, draws = texts[0], draws[0]
        return (texts, draws) if return_params else texts

    def _render(self, texts: list[str], params: list[Any]) -> list[str]:
        """One pass: caption i rendered with ``params[i]`` (None: left as it is)."""
        out: list[str] = list(texts)
        for (op, severity), members in group_params(params).items():
            spec = REGISTRY.get(op, "text")
            docs = parse_batch([texts[i] for i in members], pipeline_key(spec)) if spec.needs_parse \
                else [None] * len(members)
            for i, doc in zip(members, docs):        # one caption at a time: each has its own seed
                out[i] = apply_batch([texts[i]], op, severity, seed=params[i]["seed"], docs=[doc])[0]
        return out
