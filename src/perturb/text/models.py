"""Hugging Face models for the model-based text perturbations (MLM, BackTrans, Casual, Formal).

A model is named by the ``model=`` option of :func:`perturb.text.apply` (a Hub name already in
the local cache, or a local directory) or else by an environment variable:

- ``PERTURB_MLM_MODEL`` — a masked language model (BERT, RoBERTa...) for MLM;
- ``PERTURB_BACKTRANS_MODELS="fwd,back"`` — two seq2seq translation models, English → X → English;
- ``PERTURB_CASUAL_MODEL`` / ``PERTURB_FORMAL_MODEL`` — seq2seq style-transfer models; both fall
  back to ``PERTURB_STYLE_MODEL``.

Models load with ``local_files_only=True`` (nothing is downloaded) and are cached per process.
With no model given, or one that cannot be loaded, :class:`MissingResourceError` names the
option and the variable. Decoding is greedy, so outputs depend only on the input and the model.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Optional, Sequence, Union

import numpy as np

from ..errors import MissingResourceError

ModelRef = Union[str, os.PathLike]
MAX_NEW_TOKENS = 64
# Each model-based perturbation -> (the environment variables naming its model, the first set wins;
# what the model is).
MODEL_ENV: dict[str, tuple[tuple[str, ...], str]] = {
    "BackTrans": (("PERTURB_BACKTRANS_MODELS",), "two translation models, 'FWD,BACK'"),
    "MLM": (("PERTURB_MLM_MODEL",), "a masked language model"),
    "Casual": (("PERTURB_CASUAL_MODEL", "PERTURB_STYLE_MODEL"), "a seq2seq style-transfer model"),
    "Formal": (("PERTURB_FORMAL_MODEL", "PERTURB_STYLE_MODEL"), "a seq2seq style-transfer model"),
}


def _from_env(env: Sequence[str]) -> str | None:
    """The value of the first of ``env`` that is set and not blank."""
    return next((v for v in (os.environ.get(var, "").strip() for var in env) if v), None)


def configured(name: str) -> bool:
    """Whether the model of a model-based perturbation is named by its environment variable."""
    return _from_env(MODEL_ENV.get(name, ((), ""))[0]) is not None


def how_to_configure(name: str) -> str:
    """``set PERTURB_MLM_MODEL to a masked language model``, for a model-based perturbation."""
    variables, what = MODEL_ENV[name]
    return f"set {' or '.join(variables)} to {what}"


def resolve(option: Optional[ModelRef], env: Sequence[str], what: str) -> str:
    """The model reference: the option if given, else the first environment variable set."""
    if option is not None and str(option).strip():
        return str(option)
    value = _from_env(env)
    if value is not None:
        return value
    raise MissingResourceError(
        f"{what} needs a Hugging Face model: pass model=<name or local path> to "
        f"perturb.text.apply() or set {' or '.join(env)}. Models are never downloaded at run "
        f"time; save one locally first (e.g. model.save_pretrained(path)).")


def resolve_pair(option: Any, env: str, what: str) -> tuple[str, str]:
    """Two model references from ('fwd', 'back'), 'fwd,back' or the environment variable."""
    if isinstance(option, (list, tuple)):
        option = ",".join(str(o) for o in option)
    parts = [p.strip() for p in resolve(option, (env,), what).split(",")]
    if len(parts) != 2 or not all(parts):
        raise MissingResourceError(
            f"{what} needs two models, forward and back: pass model=('fwd', 'back') or set "
            f"{env}='fwd,back'; got {','.join(parts)!r}")
    return parts[0], parts[1]


def _load(kind: str, ref: str) -> tuple[Any, Any]:
    """(model, tokenizer) of a kind ('mlm', 'seq2seq' or 'causal'), offline only."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import transformers
    except ImportError as e:
        raise MissingResourceError(
            f"transformers is not available ({e}). Install it with: pip install transformers") from None
    auto = {"mlm": transformers.AutoModelForMaskedLM,
            "seq2seq": transformers.AutoModelForSeq2SeqLM,
            "causal": transformers.AutoModelForCausalLM}[kind]
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(ref, local_files_only=True)
        model = auto.from_pretrained(ref, local_files_only=True)
    except (OSError, ValueError) as e:
        raise MissingResourceError(
            f"could not load the {kind} model {ref!r} offline ({type(e).__name__}: {e}). Give a "
            f"local directory or a model already in the Hugging Face cache.") from None
    model.eval()
    return model, tokenizer


@functools.lru_cache(maxsize=8)
def load(kind: str, ref: str) -> tuple[Any, Any]:
    """(model, tokenizer), cached per process."""
    return _load(kind, ref)


def generate(ref: str, text: str, *, prefix: str = "",
             max_new_tokens: Optional[int] = None) -> str:
    """Greedy seq2seq output of a model for one input text.

    The output is capped at twice the input length plus 8 tokens (at most MAX_NEW_TOKENS):
    a rewrite or translation of a caption is about as long as the caption.
    """
    import torch
    model, tok = load("seq2seq", ref)
    inputs = tok(prefix + text, return_tensors="pt", truncation=True)
    if max_new_tokens is None:
        max_new_tokens = min(MAX_NEW_TOKENS, 2 * inputs["input_ids"].shape[1] + 8)
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False, num_beams=1)
    return tok.decode(out[0], skip_special_tokens=True).strip()


def _clean_piece(piece: str) -> str:
    """A vocabulary entry as a word: 'Ġcat'/'▁cat' → 'cat'; '' for sub-words and specials."""
    if piece.startswith("##"):
        return ""
    word = piece.lstrip("Ġ▁")
    return word if word.isalpha() else ""


def fill_mask(ref: str, left: str, right: str, original: str, rng: np.random.Generator,
              top_k: int = 5) -> Optional[str]:
    """A word the masked LM predicts between ``left`` and ``right`` (not ``original``).

    One of the ``top_k`` best whole-word predictions, chosen with ``rng``; None if none fits.
    """
    import torch
    model, tok = load("mlm", ref)
    if tok.mask_token is None:
        raise MissingResourceError(f"model {ref!r} has no mask token: MLM needs a masked LM")
    inputs = tok(left + tok.mask_token + right, return_tensors="pt", truncation=True)
    where = (inputs["input_ids"][0] == tok.mask_token_id).nonzero()
    if len(where) == 0:
        return None
    with torch.inference_mode():
        logits = model(**inputs).logits[0, int(where[0])]
    order = torch.argsort(logits, descending=True).tolist()
    special = set(tok.all_special_ids)
    words: list[str] = []
    for idx in order:
        if idx in special:
            continue
        word = _clean_piece(tok.convert_ids_to_tokens(idx))
        if word and word.lower() != original.lower() and word not in words:
            words.append(word)
            if len(words) == top_k:
                break
    return words[int(rng.integers(len(words)))] if words else None
