"""ImageNet-C-bar's parameters named as its reference code names them, from one of our draws.

The reference separates sampling from rendering (``sample_parameters()``, then
``transform(image, **params)``). Each C-bar op registers here how frame ``t`` of its draw reads
in those terms for a square image of side ``side`` (the reference's ``im_size``), so a draw can
be rendered by the reference and its distributions compared with ``sample_parameters()``
(``benchmarks/cbar_reference.py``). Nothing in rendering reads this module.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

# (drawn, params, t, side) -> the reference's keyword arguments of transform() for frame t
ReferenceForm = Callable[[Mapping[str, Any], Mapping[str, Any], int, int], dict[str, Any]]

_FORMS: dict[str, ReferenceForm] = {}


def reference_form(op: str) -> Callable[[ReferenceForm], ReferenceForm]:
    """Decorator: the function gives op ``op``'s draw in its reference's terms."""
    def register(fn: ReferenceForm) -> ReferenceForm:
        if op in _FORMS:
            raise ValueError(f"{op} already has a reference form: {_FORMS[op].__qualname__}")
        _FORMS[op] = fn
        return fn
    return register


def reference_ops() -> tuple[str, ...]:
    """The ops that registered a reference form."""
    return tuple(_FORMS)


def reference_params(op: str, drawn: Mapping[str, Any], params: Mapping[str, Any], t: int,
                     side: int) -> dict[str, Any]:
    """Frame ``t`` of op ``op``'s draw (``Draw.drawn``, ``Draw.params``) as its reference's
    ``transform`` keyword arguments for a ``side`` x ``side`` image."""
    if op not in _FORMS:
        raise ValueError(f"{op} has no reference form; the ops with one: {', '.join(_FORMS) or 'none'}")
    return _FORMS[op](drawn, params, int(t), int(side))
