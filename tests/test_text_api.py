"""The text API's calling convention, input checks and picklable results."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from perturb.text import TextResult, apply, apply_batch, get

pytest.importorskip("spacy")

CAPTION = "a little girl does gymnastics in the park"


def test_severity_is_the_only_positional_argument_after_the_name():
    assert apply(CAPTION, "Typos", 5, seed=1) == apply(CAPTION, "Typos", severity=5, seed=1)
    assert apply(CAPTION, "Typos", 5, seed=1) != apply(CAPTION, "Typos", 1, seed=1)
    assert apply_batch([CAPTION], "Typos", 5, seed=1) == [apply(CAPTION, "Typos", 5, seed=1)]
    with pytest.raises(TypeError):
        apply(CAPTION, "Typos", 3, 0)                      # seed is keyword-only
    with pytest.raises(TypeError):
        apply_batch([CAPTION], "Typos", 3, 0)


def test_numpy_integer_severity_is_accepted():
    assert apply(CAPTION, "Typos", np.int64(4), seed=2) == apply(CAPTION, "Typos", 4, seed=2)
    assert get("Typos").params(np.int8(1)) == get("Typos").params(1)


@pytest.mark.parametrize("bad", [True, 3.0, 0, 6, np.int64(6), "3"])
def test_bad_severity_states_the_valid_range(bad):
    with pytest.raises(ValueError) as e:
        apply(CAPTION, "Typos", bad)
    assert str(e.value) == f"severity must be an int in 1..5 for Typos; got {bad!r}"


def test_apply_batch_refuses_a_lone_string():
    with pytest.raises(TypeError, match="expected a sequence of captions"):
        apply_batch("a dog runs", "Typos")
    with pytest.raises(TypeError, match="expected a sequence of captions"):
        apply_batch(b"a dog runs", "Typos")
    with pytest.raises(TypeError, match="expected a sequence of captions"):
        apply_batch(3, "Typos")


def test_apply_batch_names_the_index_of_a_non_str_item():
    with pytest.raises(TypeError, match="at index 1; got int"):
        apply_batch(["a dog runs", 7], "Typos")


def test_non_str_caption_is_a_type_error():
    with pytest.raises(TypeError, match="expected a caption as str; got bytes"):
        apply(b"a dog runs", "Typos")


@pytest.mark.parametrize("name", ["Tense", "GenderSwap", "NoVB", "Typos"])
def test_lone_surrogate_is_a_value_error_naming_the_caption(name):
    caption = "a man \ud800 runs"
    assert get(name).needs_parse or name == "Typos"
    with pytest.raises(ValueError, match=r"caption 'a man \\ud800 runs' is not valid Unicode"):
        apply(caption, name)
    with pytest.raises(ValueError, match=r"caption at index 1 'a man \\ud800 runs'"):
        apply_batch(["a dog runs", caption], name)


@pytest.mark.parametrize("name", ["GenderSwap", "Typos", "NoVB"])
def test_results_survive_pickle_and_deepcopy(name):
    result = apply("a man is riding his bike", name, seed=0)
    assert isinstance(result, TextResult)
    for back in [copy.deepcopy(result), copy.copy(result),
                 *(pickle.loads(pickle.dumps(result, protocol=p))
                   for p in range(pickle.HIGHEST_PROTOCOL + 1))]:
        assert type(back) is TextResult
        assert (str(back), back.applied, back.original, back.perturbation) == \
            (str(result), result.applied, result.original, result.perturbation)
        assert back.to_dict() == result.to_dict()


def test_cli_refuses_a_caption_that_is_not_valid_text(capsys):
    from perturb.cli import main
    for argv in (["--name", "Tense"], ["--all"]):
        assert main(["text", "a man \ud800 runs", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("perturb text: error: caption at index 0 'a man \\ud800 runs'")
        assert err.count("\n") == 1


def test_missing_spacy_hint_installs_from_the_repository_not_a_pypi_project():
    from perturb.text.resources import INSTALL
    hint = INSTALL["spacy"]
    assert "pip install 'perturb[text]'" not in hint          # "perturb" on PyPI is another project
    assert "pip install -e '.[text]'" in hint and "repository" in hint
