"""Model-backed text perturbations (MLM, BackTrans, Casual, Formal) on tiny random local models."""
from __future__ import annotations

import numpy as np
import pytest

from perturb.errors import MissingResourceError
from perturb.text import apply, apply_batch, models

from tiny_models import build_mlm, build_seq2seq

CAPTION = "a little girl does gymnastics"
ENV_VARS = ("PERTURB_MLM_MODEL", "PERTURB_BACKTRANS_MODELS", "PERTURB_CASUAL_MODEL",
            "PERTURB_FORMAL_MODEL", "PERTURB_STYLE_MODEL")


@pytest.fixture(autouse=True)
def no_model_env(monkeypatch):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def mlm_path(tmp_path_factory):
    return str(build_mlm(tmp_path_factory.mktemp("mlm")))


@pytest.fixture(scope="module")
def s2s_paths(tmp_path_factory):
    return (str(build_seq2seq(tmp_path_factory.mktemp("fwd"), seed=1)),
            str(build_seq2seq(tmp_path_factory.mktemp("back"), seed=2)))


@pytest.mark.parametrize("name, env", [
    ("MLM", "PERTURB_MLM_MODEL"), ("BackTrans", "PERTURB_BACKTRANS_MODELS"),
    ("Casual", "PERTURB_CASUAL_MODEL"), ("Formal", "PERTURB_FORMAL_MODEL"),
])
def test_missing_model_names_option_and_env(name, env):
    with pytest.raises(MissingResourceError) as e:
        apply(CAPTION, name, seed=0)
    assert "model=" in str(e.value) and env in str(e.value)


def test_unloadable_model_is_a_missing_resource(tmp_path):
    with pytest.raises(MissingResourceError, match="offline"):
        apply(CAPTION, "Casual", model=str(tmp_path / "nowhere"))


def test_specs_flag_models():
    from perturb.text import get
    assert all(get(n).needs_model for n in ("MLM", "BackTrans", "Casual", "Formal"))


def test_mlm_replaces_one_word(mlm_path):
    out = apply(CAPTION, "MLM", seed=0, model=mlm_path)
    assert isinstance(out, str) and out.applied
    before, after = CAPTION.split(), out.split()
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and len(changed) == 1
    assert before[changed[0]] in ("little", "girl", "gymnastics")
    assert after[changed[0]].isalpha()
    assert out == apply(CAPTION, "MLM", seed=0, model=mlm_path)          # deterministic
    assert [str(r) for r in apply_batch([CAPTION, "a cat"], "MLM", seed=3, model=mlm_path)] == \
        [str(apply(c, "MLM", seed=3, model=mlm_path)) for c in (CAPTION, "a cat")]


def test_mlm_env_variable_and_cache(mlm_path, monkeypatch):
    monkeypatch.setenv("PERTURB_MLM_MODEL", mlm_path)
    assert apply(CAPTION, "MLM", seed=0) == apply(CAPTION, "MLM", seed=0, model=mlm_path)
    assert models.load("mlm", mlm_path) is models.load("mlm", mlm_path)


def test_mlm_not_applicable_without_noun_or_adjective(mlm_path):
    out = apply("run quickly", "MLM", seed=0, model=mlm_path)
    assert out == "run quickly" and not out.applied


def test_fill_mask_excludes_original(mlm_path):
    got = {models.fill_mask(mlm_path, "a little ", " does gymnastics", "girl",
                            np.random.default_rng(s)) for s in range(10)}
    assert got and None not in got and "girl" not in got and len(got) <= 5


def test_back_translation(s2s_paths, monkeypatch):
    out = apply(CAPTION, "BackTrans", model=s2s_paths)
    assert isinstance(out, str) and out.applied and out != CAPTION
    assert out == apply(CAPTION, "BackTrans", model=",".join(s2s_paths))
    monkeypatch.setenv("PERTURB_BACKTRANS_MODELS", ",".join(s2s_paths))
    assert apply(CAPTION, "BackTrans") == out


def test_back_translation_needs_two_models(s2s_paths):
    with pytest.raises(MissingResourceError, match="two models"):
        apply(CAPTION, "BackTrans", model=s2s_paths[0])


@pytest.mark.parametrize("name", ["Casual", "Formal"])
def test_style_models(name, s2s_paths, monkeypatch):
    out = apply(CAPTION, name, model=s2s_paths[0])
    assert isinstance(out, str) and out.applied and out != CAPTION
    assert out == apply(CAPTION, name, seed=5, model=s2s_paths[0])       # greedy: seed-free
    assert apply(CAPTION, name, model=s2s_paths[0], prefix="to style: ").applied
    monkeypatch.setenv("PERTURB_STYLE_MODEL", s2s_paths[0])
    assert apply(CAPTION, name) == out


def test_generate_is_a_plain_string(s2s_paths):
    text = models.generate(s2s_paths[0], CAPTION, max_new_tokens=4)
    assert isinstance(text, str) and 0 < len(text.split()) <= 4
