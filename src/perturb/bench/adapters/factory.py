"""``load_model``: the adapter a ``kind:target`` spec names, wrapped as a checked :class:`Model`;
and the checking of those strings (:func:`parse_spec`), all read off the kinds table
(:data:`~.kinds.KINDS`).

Kept apart from :mod:`.protocol` so the protocol imports no adapter family (the hf family imports
the protocol's errors).
"""
from __future__ import annotations

from ...options import options_object
from .frames import check_sampling
from .kinds import KINDS
from .model_options import ModelOptions
from .protocol import Model, ModelSpecError


def load_model(spec: str, options: ModelOptions | None = None) -> Model:
    """A model from ``hf:NAME_OR_PATH[@REV][#MODE]``, ``clip:NAME_OR_PATH`` (the hf CLIP family),
    ``precomputed:DIR``, ``callable:MODULE:ATTR``, ``http:URL``, ``toy:DIM``, loaded with
    ``options`` (:class:`~.model_options.ModelOptions`, default: its defaults); a ModelSpecError (a
    ValueError) for a spec of an unknown kind or a malformed one.
    """
    options = options_object(options, ModelOptions, "load_model")
    check_frame_sampling(spec, options.frame_sampling)
    kind, target = parse_spec(spec)
    model = KINDS[kind].load(kind, target, options)
    model.cache_key = options.cache_key
    if options.prompts is not None and model.kind == "dual":     # zero-shot classification
        from .zero_shot import zero_shot
        if not model.needs_media:
            raise ModelSpecError(f"{spec}: zero-shot classification embeds class names, which "
                                 f"precomputed embeddings cannot; pass precomputed logits (labels.json)")
        model = zero_shot(model, options.prompts, options.prompt_cache)
        model.cache_key = options.cache_key
    return model


def check_frame_sampling(spec: str, frame_sampling: str | None) -> None:
    """A frame-sampling rule that exists, for a model kind that takes one; else ModelSpecError."""
    if frame_sampling is None:
        return
    try:
        check_sampling(frame_sampling)
    except ValueError as e:
        raise ModelSpecError(f"--frame-sampling: {e}") from None
    if not KINDS[parse_spec(spec)[0]].frame_sampling:
        takes = " and ".join(f"{k}:" for k, kind in KINDS.items() if kind.frame_sampling)
        raise ModelSpecError(f"--frame-sampling applies to {takes} models; {spec!r} picks its own frames")


def parse_spec(spec: str) -> tuple[str, str]:
    """``"KIND:TARGET"`` → (kind, target), checked without loading anything (a bare URL is an
    http model); a ModelSpecError lists the valid kinds."""
    text = str(spec)
    if text.startswith(("http://", "https://")):
        text = f"http:{text}"
    kind, sep, target = text.partition(":")
    expected = f"expected one of {', '.join(k.form for k in KINDS.values())}"
    if not sep or not kind:
        raise ModelSpecError(f"model {spec!r} names no kind; {expected}")
    if kind not in KINDS:
        raise ModelSpecError(f"unknown model kind {kind!r} in {spec!r}; {expected}")
    if not target:
        raise ModelSpecError(f"model {spec!r} has no target; expected {KINDS[kind].form}")
    KINDS[kind].check(kind, target)
    return kind, target


def encoder_type(spec: str, may_import: bool = False) -> str | None:
    """``"dual"`` or ``"cross"`` as the spec says (with ``may_import``, a callable's module is
    imported; nothing is built); None where only the built model tells (its kind's
    :attr:`~.kinds.Kind.encoder`)."""
    kind, target = parse_spec(spec)
    return KINDS[kind].encoder(target, may_import)


def check_available(spec: str) -> None:
    """Before any work, that the model can be had (an hf:/clip: local folder holds its tokenizer; a
    hub name is in the local cache or the hub is reachable): ModelSpecError saying what to do."""
    kind, target = parse_spec(spec)
    KINDS[kind].available(kind, target)
