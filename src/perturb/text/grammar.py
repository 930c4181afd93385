"""Verb-phrase machinery on a parsed caption: find the main verb, conjugate, negate, change
tense, passivise. Rule-based on spaCy's dependency parse plus lemminflect.

Each transformation takes a spaCy Doc (parser pipeline) and returns the new text, or None when
the caption has no clause it applies to. Used by the TextStyle perturbations and the contrast
captions.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from . import resources
from .gender import rewrite
from .words import match_case

FINITE = ("VBZ", "VBP", "VBD")
PRESENT = ("VBZ", "VBP")
SUBJECTS = ("nsubj", "nsubjpass", "expl")
AUX_DEPS = ("aux", "auxpass")
PLURAL_WORDS = frozenset({"they", "we", "you", "these", "those", "both"})
FIRST_PERSON = frozenset({"i"})
MODAL_PAST = {"can": "could", "will": "would", "shall": "should", "may": "might",
              "ca": "could", "wo": "would", "sha": "should"}
MODAL_PRESENT = {v: k for k, v in MODAL_PAST.items() if len(k) > 2}
CLIPPED = {"ca": "can", "wo": "will", "sha": "shall"}       # "can't" → "ca" + "n't"
TO_OBJECT = {"i": "me", "he": "him", "she": "her", "we": "us", "they": "them", "who": "whom"}
TO_SUBJECT = {v: k for k, v in TO_OBJECT.items()}
NEGATORS = ("not", "n't", "never")
ENGLISH_WORD = re.compile(r"'?[A-Za-z]+")                  # verbs we know how to inflect
NO_PASSIVE_LEMMAS = frozenset({"be", "have"})               # "a dog is had by a man"


def verb_lemma(token: Any) -> str:
    """Lemma of a verb token (lemminflect: spaCy's small model says 'rides' → 'rid')."""
    word = token.text.lower()
    if word in CLIPPED:
        return CLIPPED[word]
    lemmas = resources.lemminflect().getLemma(word, upos="VERB")
    return lemmas[0] if lemmas else token.lemma_.lower()


def is_plural(token: Any) -> bool:
    """Whether a subject/object head is plural: NNS tags, plural pronouns, coordination.

    Nouns in '-ics' (gymnastics, athletics) and 'news' are singular despite their NNS tag.
    """
    word = token.text.lower()
    if any(c.dep_ == "conj" for c in token.children):
        return True
    if word in PLURAL_WORDS:
        return True
    if token.tag_ in ("NNS", "NNPS"):
        return not (word.endswith("ics") or word == "news")
    return False


def conjugate(lemma: str, tag: str, *, plural: bool = False, first_person: bool = False) -> str:
    """``lemma`` in a Penn verb tag, agreeing with the subject ('be' → is/are/am/was/were)."""
    if lemma == "be" and tag in FINITE:
        if tag == "VBD":
            return "were" if plural else "was"
        return "am" if first_person else ("are" if plural else "is")
    if tag in ("VBZ", "VBP"):
        tag = "VBP" if plural or first_person else "VBZ"
    return resources.inflect(lemma, tag)


def subject_of(verb: Any) -> Optional[Any]:
    """The subject of a verb (or of the verb an auxiliary belongs to)."""
    for v in (verb, verb.head):
        for c in v.children:
            if c.dep_ in SUBJECTS:
                return c
        if v.dep_ not in AUX_DEPS:
            break
    return None


def agreement(verb: Any) -> dict[str, bool]:
    """Keyword arguments of :func:`conjugate` for a verb's subject."""
    subj = subject_of(verb)
    if subj is None:
        return {"plural": verb.tag_ == "VBP", "first_person": False}
    return {"plural": is_plural(subj), "first_person": subj.text.lower() in FIRST_PERSON}


def main_verb(doc: Any) -> Optional[Any]:
    """The main verb of the first clause: the root if verbal, else the first verb in the Doc."""
    for sent in doc.sents:
        root = sent.root
        if root.pos_ in ("VERB", "AUX") and root.tag_.startswith(("VB", "MD")):
            return root
    verbs = [t for t in doc if t.pos_ in ("VERB", "AUX") and t.dep_ not in AUX_DEPS]
    return verbs[0] if verbs else None


def auxiliaries(verb: Any) -> list[Any]:
    """The auxiliaries of a verb, left to right ('has been', 'is', 'can')."""
    return [c for c in verb.children if c.dep_ in AUX_DEPS and c.i < verb.i]


def negation(verb: Any) -> Optional[Any]:
    """The 'not'/'n't'/'never' token negating a verb, if any."""
    for c in verb.children:
        if c.dep_ == "neg" and c.lower_ in NEGATORS:
            return c
    return None


def all_caps(text: str) -> bool:
    """'SHE' and 'MR.' are all caps; 'A' and 'I' are not (one letter says nothing)."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) > 1 and all(c.isupper() for c in letters)


def _with_case(source: Any, word: str) -> str:
    """``word`` cased like a token; lower-case unless the token starts a sentence or is ALL CAPS."""
    if all_caps(source.text):
        return word.upper()
    return match_case(source.text, word) if source.is_sent_start else word


def negate(doc: Any) -> Optional[str]:
    """'a girl does gymnastics' → 'a girl does not do gymnastics' (do-support, aux, copula)."""
    verb = main_verb(doc)
    if verb is None:
        return None
    auxes = auxiliaries(verb)
    if auxes:
        first = auxes[0]
        joint = "" if first.lower_ == "can" else " "        # "cannot", "is not"
        return rewrite(doc, {first.i: first.text + joint + _with_case(first, "not")})
    if verb.tag_ in FINITE and verb_lemma(verb) == "be":
        return rewrite(doc, {verb.i: verb.text + " not"})
    if verb.tag_ in FINITE:
        do = conjugate("do", verb.tag_, **agreement(verb))
        return rewrite(doc, {verb.i: _with_case(verb, f"{do} not {verb_lemma(verb)}")})
    if verb.tag_ == "MD":
        return rewrite(doc, {verb.i: verb.text + " not"})
    rest = verb.text.lower() if verb.is_sent_start and not verb.text.isupper() else verb.text
    return rewrite(doc, {verb.i: _with_case(verb, "not") + " " + rest})


def unnegate(doc: Any) -> Optional[str]:
    """'a girl does not do gymnastics' → 'a girl does gymnastics'; None when nothing is negated."""
    for verb in doc:
        neg = negation(verb)
        if neg is None:
            continue
        out = {neg.i: ""}
        auxes = auxiliaries(verb)
        before = doc[neg.i - 1] if neg.i > 0 else None
        if before is not None and before.lower_ in CLIPPED:   # "ca n't" → "can"
            out[before.i] = match_case(before.text, CLIPPED[before.lower_])
        if len(auxes) == 1 and verb_lemma(auxes[0]) == "do" and verb.tag_ == "VB":
            do = auxes[0]                                  # drop do-support: "does not like" → "likes"
            out[do.i] = ""
            out[verb.i] = _with_case(do, conjugate(verb_lemma(verb), do.tag_, **agreement(do)))
        return rewrite(doc, out)
    return None


def toggle_negation(doc: Any) -> Optional[str]:
    """Negate a positive caption, or remove the negation of a negative one."""
    reversed_ = unnegate(doc)
    return reversed_ if reversed_ is not None else negate(doc)


def _retense(token: Any, tag: str) -> str:
    """A finite verb or modal token moved to another tense (VBD or present)."""
    word = token.lower_
    if token.tag_ == "MD":
        table = MODAL_PAST if tag == "VBD" else MODAL_PRESENT
        new = table.get(word)
        if new is None:
            return token.text
    else:
        new = conjugate(verb_lemma(token), tag, **agreement(token))
    return _in_place(token, new)


def _in_place(token: Any, new: str) -> str:
    """A new verb form written where ``token`` was: contractions opened ("'s" → " was"), case kept."""
    if token.text.startswith("'"):                     # "he's running" → "he was running"
        return " " + new
    return _with_case(token, new) if token.text[:1].isupper() else new


def change_tense(doc: Any) -> Optional[str]:
    """Present → past ('does' → 'did', 'is' → 'was', 'can' → 'could'); a past caption → present."""
    verbs = [t for t in doc if ENGLISH_WORD.fullmatch(t.text)]
    present = [t for t in verbs if t.tag_ in PRESENT or (t.tag_ == "MD" and t.lower_ in MODAL_PAST)]
    if present:
        return rewrite(doc, {t.i: _retense(t, "VBD") for t in present})
    past = [t for t in verbs if t.tag_ == "VBD" or (t.tag_ == "MD" and t.lower_ in MODAL_PRESENT)]
    if past:
        return rewrite(doc, {t.i: _retense(t, "VBZ") for t in past})
    return None


def _span_text(tokens: list[Any]) -> str:
    """Tokens re-joined with their own whitespace, trailing space stripped."""
    return "".join(t.text + t.whitespace_ for t in tokens).strip()


def _noun_phrase(head: Any, pronoun_case: dict[str, str], first: bool, capital: bool) -> str:
    """A subject/object subtree for its new position: pronoun case, first-letter case."""
    tokens = sorted(head.subtree, key=lambda t: t.i)
    words = [t.text + t.whitespace_ for t in tokens]
    if len(tokens) == 1 and head.lower_ in pronoun_case:
        words[0] = match_case(head.text, pronoun_case[head.lower_]) if head.text != "I" \
            else pronoun_case["i"]
    text = "".join(words).strip()
    if first and capital:
        return text[:1].upper() + text[1:]
    if not first and tokens[0].is_sent_start and tokens[0].tag_ not in ("NNP", "NNPS") \
            and tokens[0].text != "I" and not all_caps(tokens[0].text):
        return text[:1].lower() + text[1:]
    return text


def passive_verb_group(verb: Any, obj: Any) -> Optional[list[str]]:
    """The passive verb words ('is being ridden', 'has been chopped', 'are not eaten')."""
    auxes = auxiliaries(verb)
    neg = negation(verb)
    agree = {"plural": is_plural(obj), "first_person": obj.lower_ in FIRST_PERSON}
    participle = resources.inflect(verb_lemma(verb), "VBN")
    words: list[str] = []
    if not auxes:
        if verb.tag_ not in FINITE:
            return None
        words = [conjugate("be", verb.tag_, **agree)]
    else:
        for a in auxes:
            lemma = verb_lemma(a)
            if lemma == "do":                                  # do-support becomes 'be'
                words.append(conjugate("be", a.tag_, **agree))
            elif a.tag_ in FINITE:                             # 'is', 'has': agree with the new subject
                words.append(conjugate(lemma, a.tag_, **agree))
            else:
                words.append(CLIPPED.get(a.lower_, a.text.lower()))
        last = auxes[-1]
        if verb.tag_ == "VBG" and verb_lemma(last) == "be":
            words.append("being")
        elif verb.tag_ == "VBN" and verb_lemma(last) == "have":
            words.append("been")
        elif verb.tag_ == "VB" and verb_lemma(last) != "do":
            words.append("be")
        elif verb.tag_ not in ("VB", "VBG", "VBN"):
            return None
    if neg is not None:                                        # "is not", "cannot", "is never"
        word = "never" if neg.lower_ == "never" else "not"
        words[0] += word if (words[0], word) == ("can", "not") else " " + word
    words.append(participle)
    return words


def passivise(doc: Any) -> Optional[str]:
    """'a little girl does gymnastics' → 'gymnastics is done by a little girl'.

    Applies to an active main clause with a nominal subject before the verb and a direct object
    after it; other words keep their place around the new clause. None otherwise.
    """
    verb = main_verb(doc)
    if verb is None or verb_lemma(verb) in NO_PASSIVE_LEMMAS \
            or not ENGLISH_WORD.fullmatch(verb.text):
        return None
    deps = {c.dep_: c for c in verb.children}
    subj, obj = deps.get("nsubj"), deps.get("dobj")
    if subj is None or obj is None or "dative" in deps or "nsubjpass" in deps \
            or not subj.i < verb.i < obj.i or subj.lower_ in ("who", "that", "which"):
        return None
    group = passive_verb_group(verb, obj)
    if group is None:
        return None
    subj_toks = sorted(subj.subtree, key=lambda t: t.i)
    obj_toks = sorted(obj.subtree, key=lambda t: t.i)
    moved = {t.i for t in subj_toks + obj_toks} | {a.i for a in auxiliaries(verb)} | {verb.i}
    neg = negation(verb)
    if neg is not None:
        moved.add(neg.i)
    start, end = subj_toks[0].i, obj_toks[-1].i
    between = [t for t in doc[start:end + 1] if t.i not in moved]
    adverbs = [t for t in between if t.i < verb.i]
    particles = [t for t in between if t.i > verb.i]
    starts = subj_toks[0].is_sent_start and subj_toks[0].text[:1].isupper()
    new_subj = _noun_phrase(obj, TO_SUBJECT, first=True, capital=starts)
    agent = _noun_phrase(subj, TO_OBJECT, first=False, capital=starts)
    words = [new_subj, group[0], _span_text(adverbs), *group[1:], _span_text(particles),
             "by", agent]
    clause = " ".join(w for w in words if w)
    before = doc[:start].text_with_ws
    after = doc[end + 1:].text_with_ws
    if all_caps(doc.text):
        clause = clause.upper()
    return before + clause + doc[end].whitespace_ + after


def plural_agreement(subject: Any) -> dict[int, str]:
    """Replacements making a subject's finite verb plural ('she is' → 'are', 'he runs' → 'run').

    For a singular subject turned plural, e.g. 'he' → 'they'.
    """
    if subject.dep_ not in ("nsubj", "nsubjpass"):
        return {}
    verb = subject.head
    finite = [a for a in auxiliaries(verb) if a.tag_ in FINITE] or \
        ([verb] if verb.tag_ in FINITE else [])
    if not finite or finite[0].tag_ not in ("VBZ", "VBD"):
        return {}
    tok = finite[0]
    new = conjugate(verb_lemma(tok), "VBP" if tok.tag_ == "VBZ" else "VBD", plural=True)
    return {} if new == tok.lower_ else {tok.i: _in_place(tok, new)}
