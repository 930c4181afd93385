"""The :class:`Contrast` record and the edit arithmetic every generator shares."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

TYPES = ("gender", "person_id", "verb", "object", "action", "attribute", "counting",
         "relation", "event_order", "hallucination")


@dataclass(frozen=True)
class Span:
    """Character span of the source that changed: ``source[start:end] == original``."""

    start: int
    end: int
    original: str
    replacement: str


@dataclass(frozen=True)
class Contrast:
    """A contrast caption: ``source`` with ``span`` replaced, its type, rule and explanation."""

    text: str
    type: str
    span: Span
    rule: str
    explanation: str
    source: str
    edits: tuple[Span, ...] = field(default=())   # the separate word edits inside ``span``

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        d = asdict(self)
        d["span"] = asdict(self.span)
        d["edits"] = [asdict(e) for e in self.edits]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Contrast":
        """The inverse of :meth:`to_dict`."""
        return cls(text=d["text"], type=d["type"], span=Span(**d["span"]), rule=d["rule"],
                   explanation=d.get("explanation", ""), source=d["source"],
                   edits=tuple(Span(**e) for e in d.get("edits", ())))

    def __str__(self) -> str:
        return self.text


Edit = tuple[int, int, str]       # (start, end, replacement) in source character offsets


def apply_edits(source: str, edits: Iterable[Edit]) -> tuple[str, Span, tuple[Span, ...]]:
    """The edited text, the enclosing span and the individual spans of non-overlapping edits."""
    ordered = sorted(edits)
    if not ordered:
        raise ValueError("no edits")
    parts, pos, spans = [], 0, []
    for start, end, new in ordered:
        if start < pos:
            raise ValueError(f"overlapping edits: {ordered}")
        parts += [source[pos:start], new]
        spans.append(Span(start, end, source[start:end], new))
        pos = end
    parts.append(source[pos:])
    text = "".join(parts)
    start, end = ordered[0][0], ordered[-1][1]
    tail = len(source) - end
    span = Span(start, end, source[start:end], text[start:len(text) - tail])
    return text, span, tuple(spans)


def token_edits(doc: Any, replacements: dict[int, str]) -> list[Edit]:
    """Character edits replacing whole tokens of a spaCy Doc ({token index: new text})."""
    return [(doc[i].idx, doc[i].idx + len(doc[i].text), new) for i, new in replacements.items()]


def make(source: str, edits: Sequence[Edit], type: str, rule: str,
         explanation: str = "") -> Contrast | None:
    """A Contrast from edits, or None when the edits change nothing."""
    edits = [e for e in edits if source[e[0]:e[1]] != e[2]]
    if not edits:
        return None
    text, span, spans = apply_edits(source, edits)
    if text == source:
        return None
    return Contrast(text, type, span, rule, explanation, source, spans if len(spans) > 1 else ())
