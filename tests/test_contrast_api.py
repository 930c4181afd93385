"""The contrast API's calling convention, input checks, picklable results and module layering."""
from __future__ import annotations

import ast
import copy
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

CONTRAST = Path(__file__).resolve().parents[1] / "src" / "perturb" / "contrast"


def _imported_modules(path: Path) -> set[str]:
    """Sibling modules a contrast module imports (``from . import x``, ``from .x import y``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
    return found


def test_lm_does_not_import_verb():
    assert "verb" not in _imported_modules(CONTRAST / "lm.py")
    assert "lm" not in _imported_modules(CONTRAST / "verb_tokens.py")


@pytest.mark.parametrize("first", ["perturb.contrast.lm", "perturb.contrast.verb",
                                   "perturb.contrast.verb_tokens"])
def test_each_verb_module_imports_first_in_a_fresh_process(first):
    code = (f"import {first}, perturb.contrast.lm as lm, perturb.contrast.verb as verb; "
            "assert callable(lm.candidates) and callable(verb.candidates)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=CONTRAST.parents[2], timeout=300)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- calling convention, inputs
pytest.importorskip("spacy")

from perturb.cli import main  # noqa: E402
from perturb.contrast import generate, generate_batch, mc  # noqa: E402
from perturb.contrast.entailment import entailment_set  # noqa: E402

CAPTION = "Two men are doing wrestling."


def test_seed_and_options_are_keyword_only():
    with pytest.raises(TypeError):
        generate(CAPTION, "gender", 0)
    with pytest.raises(TypeError):
        generate_batch([CAPTION], "gender", 0)
    items = [(f"v{k}", f"a man is riding a horse in scene {k}") for k in range(6)]
    with pytest.raises(TypeError):
        mc.random_mc(items, 0)
    with pytest.raises(TypeError):
        mc.contrast_mc(items, "gender", 0)
    with pytest.raises(TypeError):
        entailment_set(items, "gender", 0)
    assert [c.text for c in generate(CAPTION, "gender", seed=0)] == ["Two women are doing wrestling."]
    assert generate_batch([CAPTION], "gender", seed=0) == [generate(CAPTION, "gender", seed=0)]


def test_generate_batch_refuses_a_lone_string():
    with pytest.raises(TypeError, match="expected a sequence of captions"):
        generate_batch(CAPTION, "gender")


def test_generate_batch_names_the_index_of_a_non_str_item():
    with pytest.raises(TypeError, match="at index 2; got NoneType"):
        generate_batch([CAPTION, CAPTION, None], "gender")


def test_non_str_caption_is_a_type_error():
    with pytest.raises(TypeError, match="expected a caption as str; got int"):
        generate(3, "gender")


@pytest.mark.parametrize("type", ["gender", "verb", "object"])
def test_lone_surrogate_is_a_value_error_naming_the_caption(type):
    caption = "a man \ud800 runs"
    with pytest.raises(ValueError, match=r"caption 'a man \\ud800 runs' is not valid Unicode"):
        generate(caption, type)
    with pytest.raises(ValueError, match=r"caption at index 0 'a man \\ud800 runs'"):
        generate_batch([caption], type)


def test_contrasts_survive_pickle_and_deepcopy():
    found = generate("A man in black shirt is talking with his two friends.", "gender", seed=0)
    assert found and found[0].span.original
    for back in [copy.deepcopy(found), *(pickle.loads(pickle.dumps(found, protocol=p))
                                         for p in range(pickle.HIGHEST_PROTOCOL + 1))]:
        assert back == found and back[0].to_dict() == found[0].to_dict()


def test_cli_says_when_no_contrast_applies(capsys):
    assert main(["contrast", "a dog runs", "--type", "gender"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "perturb contrast: no gender contrast for 1 of 1 caption(s); nothing printed for them\n"
    assert main(["contrast", "a dog runs", "--type", "gender", "--strict"]) == 1
    assert main(["contrast", CAPTION, "a dog runs", "--type", "gender"]) == 0
    out, err = capsys.readouterr()
    assert out == "Two women are doing wrestling.\n" and "for 1 of 2 caption(s)" in err


def test_cli_refuses_a_caption_that_is_not_valid_text(capsys):
    assert main(["contrast", "a man \ud800", "--type", "gender"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("perturb contrast: error: caption at index 0") and "Unicode" in err
