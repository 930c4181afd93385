"""Natural-language explanations of contrasts, one template per type (VideoCon-style)."""
from __future__ import annotations

from ..text import resources

TEMPLATES = {
    "verb": "{subject} {be} {original}{object}, not {replacement}{pronoun}",
    "verb_bare": "the caption says {original}, not {replacement}",
    "swap": "{source} instead of {replacement}",
    "gender": "it shows {original}, not {replacement}",
    "person_id": "it is {original}, not {replacement}",
    "relation": "{source}, not {replacement}",
    "event_order": "first {first}, then {second}, not the other way round",
    "before_after": "{source}: {original}, not {replacement}",
}


def core(source: str) -> str:
    """The caption without its final full stop and outer spaces."""
    return source.strip().rstrip(".").strip()


def lower_first(text: str) -> str:
    """'A man' → 'a man'; words in capitals or proper names after the first letter are kept."""
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and (len(first) == 1 or first[1:].islower()) and first.lower() in _SENTENCE_STARTERS:
        return text[:1].lower() + text[1:]
    return text


_SENTENCE_STARTERS = {"a", "an", "the", "one", "two", "three", "four", "five", "six", "seven",
                      "eight", "nine", "ten", "some", "this", "that", "these", "those", "his",
                      "her", "their", "its", "my", "our", "your", "he", "she", "they", "it",
                      "man", "woman", "men", "women", "boy", "girl", "people", "someone"}


def render(key: str, **fields: str) -> str:
    """Fill one template."""
    return TEMPLATES[key].format(**fields)


def progressive(lemma: str) -> str:
    """The -ing form of a verb lemma ('raise' → 'raising')."""
    return resources.inflect(lemma, "VBG")


def verb(original: str, replacement: str, subject: str = "", plural: bool = False,
         obj: str = "") -> str:
    """'the man is lowering his gun, not raising it' from lemmas, subject and object text."""
    if not subject:
        return render("verb_bare", original=progressive(original), replacement=progressive(replacement))
    pronoun = (" them" if obj.split()[-1].endswith("s") else " it") if obj else ""
    return render("verb", subject=subject, be="are" if plural else "is",
                  original=progressive(original), object=f" {obj}" if obj else "",
                  replacement=progressive(replacement), pronoun=pronoun)
