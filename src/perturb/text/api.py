"""Public text API: ``apply``, ``apply_batch`` and the :class:`TextResult` they return.

A text kernel has the signature ``kernel(text, rng, *, doc=None, **params) -> (new_text, applied)``;
``doc`` is a spaCy Doc when the spec says ``needs_parse``. The per-caption Generator is derived
from (seed, perturbation name, caption), so a batch gives exactly the one-by-one results.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..errors import NotApplicableError
from ..registry import REGISTRY, Spec
from ..rng import SeedLike, base_seed, derive_generator
from . import resources
from .inputs import check_caption, check_captions

PIPELINES = {"tagger": ("parser", "ner"), "parser": ("ner",), "full": ()}


class TextResult(str):
    """The perturbed caption (a ``str``) that also says whether the perturbation applied."""

    applied: bool
    original: str
    perturbation: str

    def __new__(cls, text: str, *, applied: bool, original: str, perturbation: str) -> "TextResult":
        obj = super().__new__(cls, text)
        obj.applied = applied
        obj.original = original
        obj.perturbation = perturbation
        return obj

    @property
    def text(self) -> str:
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        return {"text": str(self), "applied": self.applied, "original": self.original,
                "perturbation": self.perturbation}

    def __reduce__(self) -> tuple[Any, ...]:
        # str's default reduction calls __new__ with the text alone; ours needs the attributes
        # too (pickling for process pools, copy.deepcopy).
        return (_text_result, (type(self), str(self), self.applied, self.original,
                               self.perturbation))


def _text_result(cls: type, text: str, applied: bool, original: str,
                 perturbation: str) -> TextResult:
    """Rebuild a pickled :class:`TextResult`."""
    return cls(text, applied=applied, original=original, perturbation=perturbation)


def get(name: str) -> Spec:
    """The registry entry of a text perturbation (aliases accepted)."""
    return REGISTRY.get(name, "text")


def pipeline_for(spec: Spec) -> Any:
    """The spaCy pipeline a parse-dependent perturbation needs (fewest components possible)."""
    return resources.nlp(PIPELINES[pipeline_key(spec)])


class _LazyGenerator:
    """The per-caption Generator, derived on first use: deterministic kernels, and captions a
    kernel does not apply to, need none."""

    __slots__ = ("_key", "_rng")

    def __init__(self, *key: Any) -> None:
        self._key, self._rng = key, None

    def __getattr__(self, name: str) -> Any:
        if self._rng is None:
            self._rng = derive_generator(*self._key)
        return getattr(self._rng, name)


def _run(spec: Spec, text: str, doc: Any, seed: SeedLike, params: dict[str, Any],
         strict: bool) -> TextResult:
    if text.strip():
        rng = _LazyGenerator(seed, spec.name, text)
        new, applied = spec.fn(text, rng, doc=doc, **params)
    else:
        new, applied = text, False
    if strict and not applied:
        raise NotApplicableError(f"{spec.name} does not apply to {text!r}")
    return TextResult(new if applied else text, applied=applied, original=text,
                      perturbation=spec.name)


def apply(text: str, name: str, severity: int | None = None, *, seed: SeedLike = None,
          strict: bool = False, **options: Any) -> TextResult:
    """Perturb one caption. Returns a :class:`TextResult` (a str with ``.applied``).

    ``severity`` (1..5) exists for perturbations with a natural strength; ``strict=True`` raises
    :class:`NotApplicableError` instead of returning the caption unchanged. Extra keyword
    options (e.g. ``model=`` for model-based perturbations) go to the kernel.
    """
    spec = get(name)
    params = {**spec.params(severity), **options}
    text = check_caption(text)
    base = base_seed(seed)
    doc = pipeline_for(spec)(text) if spec.needs_parse and text.strip() else None
    return _run(spec, text, doc, base, params, strict)


def pipeline_key(spec: Spec) -> str:
    """Which spaCy pipeline a parse-dependent perturbation reads ("tagger", "parser" or "full")."""
    return spec.extra.get("pipeline", "tagger")


def parse_batch(texts: Sequence[str], pipeline: str = "tagger", batch_size: int = 256) -> list[Any]:
    """spaCy Docs of ``texts`` from one pipeline (None for blank captions), to share between
    every perturbation with that :func:`pipeline_key` (see ``apply_batch(docs=...)``)."""
    if pipeline not in PIPELINES:
        raise ValueError(f"pipeline must be one of {sorted(PIPELINES)}; got {pipeline!r}")
    texts = check_captions(texts)
    parsed = iter(resources.nlp(PIPELINES[pipeline]).pipe([t for t in texts if t.strip()], batch_size=batch_size))
    return [next(parsed) if t.strip() else None for t in texts]


def apply_batch(texts: Iterable[str], name: str, severity: int | None = None, *,
                seed: SeedLike = None, strict: bool = False, batch_size: int = 256,
                progress: bool = False, docs: Sequence[Any] | None = None,
                **options: Any) -> list[TextResult]:
    """Perturb many captions; equals ``[apply(t, name, severity, seed=seed) for t in texts]``.

    ``texts`` is a sequence of str (a lone str is refused, not split into characters).
    Parse-dependent perturbations run spaCy through ``nlp.pipe`` in batches, unless ``docs``
    gives the Docs already (``parse_batch(texts, pipeline_key(spec))``; kernels only read them).
    """
    spec = get(name)
    params = {**spec.params(severity), **options}
    texts = check_captions(texts)
    base = base_seed(seed)
    if docs is not None and len(docs) != len(texts):
        raise ValueError(f"docs must hold one spaCy Doc per text ({len(texts)}); got {len(docs)}")
    if not spec.needs_parse:
        docs = [None] * len(texts)
    elif docs is None:
        docs = parse_batch(texts, pipeline_key(spec), batch_size)
    items = zip(texts, docs)
    if progress:
        from ..progress import bar
        items = bar(items, total=len(texts), desc=spec.name, unit="caption")
    return [_run(spec, t, d, base, params, strict) for t, d in items]
