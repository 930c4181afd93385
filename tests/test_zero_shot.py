"""Zero-shot classification over every dual-encoder family (tiny random models of the real classes):
label embeddings as CLIP's recipe makes them, logits, one text pass per classifier and per cache,
the classifier's version, card and frames, and ``--prompt``'s templates and their errors."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from bench_fixtures import tiny_items  # noqa: E402
from hf_models import BUILDERS  # noqa: E402
from perturb.bench.adapters import protocol, zero_shot as zs  # noqa: E402
from perturb.bench.adapters.factory import load_model  # noqa: E402
from perturb.bench.adapters.model_options import ModelOptions  # noqa: E402
from perturb.bench.adapters.zero_shot import Prompts, ZeroShotClassifier, read_templates, zero_shot  # noqa: E402

CLIPS = [it.meta["clip"] for it in tiny_items(3)]             # (8, 32, 32, 3) uint8 each
TEMPLATES = ("a photo of a {}.", "a {} scene")
CLASSES = ("cat", "dog", "boat", "red car")
PROMPTS = Prompts(TEMPLATES, CLASSES)
FAMILIES = ("clip", "siglip", "siglip2", "xclip")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("zs")
    built: dict[str, object] = {}

    def get(name: str):
        if name not in built:
            built[name] = BUILDERS[name](root / name)
        return built[name]
    return get


def load(ckpt, name: str) -> protocol.Model:
    """A fresh dual-encoder Model of the family (X-CLIP through its #embed adapter)."""
    return load_model(f"hf:{ckpt(name)}#embed", ModelOptions(device="cpu", batch_size=2))


def by_hand(model: protocol.Model, name: str) -> np.ndarray:
    """CLIP's recipe: the templates filled with ``name``, unit text embeddings, their mean, renormalised."""
    rows = model.impl.encode_texts([t.replace("{}", name) for t in TEMPLATES])
    rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    mean = rows.mean(axis=0)
    return mean / np.linalg.norm(mean)


@pytest.mark.parametrize("family", FAMILIES)
def test_logits_are_100_cosines_to_the_mean_template_embedding(ckpt, family):
    model = load(ckpt, family)
    clf = ZeroShotClassifier(model, PROMPTS)
    logits = clf.classify(CLIPS)
    assert logits.shape == (3, 4) and logits.dtype == np.float32 and clf.labels == CLASSES
    labels = clf.label_embeddings()
    for c, name in enumerate(CLASSES):
        assert np.allclose(labels[c], by_hand(model, name), atol=1e-6), name
    videos = model.impl.encode_videos(CLIPS)
    videos = videos / np.linalg.norm(videos, axis=1, keepdims=True)
    assert np.allclose(logits, 100 * videos @ np.stack([by_hand(model, n) for n in CLASSES]).T, atol=1e-4)
    assert model.calls["texts"] == 1 and np.array_equal(clf.classify(CLIPS[1:]), logits[1:])
    assert model.calls["texts"] == 1                                    # a second classify: no text pass


@pytest.mark.parametrize("family", FAMILIES)
def test_label_embeddings_are_made_once_and_then_read_from_the_cache(ckpt, family, tmp_path):
    model = load(ckpt, family)
    clf = ZeroShotClassifier(model, PROMPTS, cache_dir=str(tmp_path))
    first = clf.classify(CLIPS)
    assert model.calls["texts"] == 1 and model.items["texts"] == 8 and clf.text_passes == 1
    assert np.array_equal(clf.classify(CLIPS[:2]), first[:2])           # a second call: no text pass
    assert model.calls["texts"] == 1 and model.calls["videos"] == 2
    again = load(ckpt, family)                                          # a later run, same cache
    clf2 = ZeroShotClassifier(again, PROMPTS, cache_dir=str(tmp_path))
    assert np.array_equal(clf2.classify(CLIPS), first)
    assert again.calls["texts"] == 0 and clf2.text_passes == 0


def test_a_cache_over_other_classes_embeds_only_the_new_ones(ckpt, tmp_path):
    model = load(ckpt, "clip")
    whole = ZeroShotClassifier(model, PROMPTS, cache_dir=str(tmp_path)).label_embeddings()
    more = ZeroShotClassifier(model, Prompts(TEMPLATES, ("boat", "sky", "cat")), cache_dir=str(tmp_path))
    rows = more.label_embeddings()
    assert model.items["texts"] == 8 + 2                                # only "sky", under both templates
    assert np.array_equal(rows[0], whole[2]) and np.array_equal(rows[2], whole[0])
    assert np.allclose(rows[1], by_hand(model, "sky"), atol=1e-6)


def test_prompts_are_embedded_in_batches(ckpt, monkeypatch):
    model = load(ckpt, "clip")
    whole = ZeroShotClassifier(model, PROMPTS).label_embeddings()
    monkeypatch.setattr(zs, "TEXT_BATCH", 3)
    batched = ZeroShotClassifier(model, PROMPTS).label_embeddings()
    assert model.calls["texts"] == 1 + 3 and np.allclose(batched, whole, atol=1e-6)   # 8 prompts: 3 + 3 + 2


def test_the_version_follows_model_templates_and_classes(ckpt):
    model = load(ckpt, "clip")
    version = ZeroShotClassifier(model, PROMPTS).cache_version
    assert version == ZeroShotClassifier(load(ckpt, "clip"), PROMPTS).cache_version
    assert len({version,
                ZeroShotClassifier(model, Prompts(("a video of a {}.",), CLASSES)).cache_version,
                ZeroShotClassifier(model, Prompts(TEMPLATES[::-1], CLASSES)).cache_version,
                ZeroShotClassifier(model, Prompts(TEMPLATES, CLASSES[:3])).cache_version,
                ZeroShotClassifier(load(ckpt, "siglip"), PROMPTS).cache_version}) == 5
    model.cache_key = "pinned"                                          # --cache-key pins the inner version
    assert ZeroShotClassifier(model, PROMPTS).inner_version == "key:pinned"


def test_card_frames_and_tensors_are_the_dual_encoders(ckpt):
    model = load(ckpt, "xclip")
    clf = ZeroShotClassifier(model, PROMPTS)
    assert clf.frame_spec is model.impl.frame_spec and clf.accepts_tensors is True
    assert clf.card() == {**model.impl.card(), "zero_shot": {"templates": list(TEMPLATES), "classes": 4}}
    assert clf.card()["mode"] == "embed" and clf.card()["family"] == "xclip"


@pytest.mark.skipif(not hasattr(protocol, "Classifier"), reason="Model learns the classifier kind with --task classify")
def test_zero_shot_wraps_the_dual_encoder_into_a_classifier_model(ckpt):
    model = load(ckpt, "clip")
    wrapped = zero_shot(model, PROMPTS)
    assert wrapped.kind == "classifier" and isinstance(wrapped.impl, ZeroShotClassifier)
    assert isinstance(wrapped.impl, protocol.Classifier)
    assert wrapped.id == f"{model.id}#zero-shot@{wrapped.impl.cache_version[:8]}"
    assert wrapped.classify(CLIPS).shape == (3, 4)


def test_zero_shot_needs_a_dual_encoder(ckpt):
    cross = load_model(f"hf:{ckpt('xclip')}#logits", ModelOptions(device="cpu"))
    with pytest.raises(ValueError) as e:
        zero_shot(cross, PROMPTS)
    assert str(e.value) == (f"zero-shot classification needs a dual encoder (encode_videos, encode_texts); "
                            f"{cross.id} is a cross model (for X-CLIP use its #embed mode)")


def test_prompts_with_a_bad_template_or_no_classes_are_refused(ckpt):
    model = load(ckpt, "clip")
    with pytest.raises(ValueError, match=r"^prompts: template 'a photo' holds 0 '\{\}'; expected exactly one"):
        ZeroShotClassifier(model, Prompts(("a photo",), CLASSES))
    with pytest.raises(ValueError, match="^zero-shot classification needs at least one class name$"):
        ZeroShotClassifier(model, Prompts(TEMPLATES, ()))
    with pytest.raises(ValueError, match="^zero-shot classification needs at least one prompt template$"):
        ZeroShotClassifier(model, Prompts((), CLASSES))


# ---------- --prompt: one template or a file of them ----------

def test_a_template_is_itself_and_a_file_gives_its_templates(tmp_path):
    assert read_templates("a photo of a {}.") == ("a photo of a {}.",)
    f = tmp_path / "templates.txt"
    f.write_text("# CLIP-style templates\n\na bad photo of a {}.\n  a {} in a video game.  \n\n# end\n",
                 encoding="utf-8")
    assert read_templates(str(f)) == ("a bad photo of a {}.", "a {} in a video game.")


def test_a_template_without_braces_in_a_file_names_it_the_file_and_the_line(tmp_path):
    f = tmp_path / "templates.txt"
    f.write_text("a photo of a {}.\n# note\na photo of\n", encoding="utf-8")
    with pytest.raises(ValueError) as e:
        read_templates(str(f))
    assert str(e.value) == (f"{f}:3: template 'a photo of' holds 0 '{{}}'; expected exactly one '{{}}' where "
                            f"the class name goes (e.g. 'a photo of a {{}}.')")
    f.write_text("a {} of a {}.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r":1: template 'a \{\} of a \{\}\.' holds 2 '\{\}'"):
        read_templates(str(f))


def test_a_prompt_that_is_neither_a_template_nor_a_file_is_refused(tmp_path):
    with pytest.raises(ValueError) as e:
        read_templates("a photo of a cat")
    assert str(e.value) == ("--prompt 'a photo of a cat': neither a template with exactly one '{}' "
                            "(e.g. 'a photo of a {}.') nor a file of templates")
    with pytest.raises(ValueError, match=r"^--prompt '.*missing\.txt': neither a template"):
        read_templates(str(tmp_path / "missing.txt"))


def test_an_empty_template_file_is_refused(tmp_path):
    f = tmp_path / "empty.txt"
    f.write_text("# only a comment\n\n", encoding="utf-8")
    with pytest.raises(ValueError) as e:
        read_templates(str(f))
    assert str(e.value) == f"{f}: no templates; expected one template a line, each with exactly one '{{}}'"
    f.write_bytes(b"a photo of a \xff{}\n")
    with pytest.raises(ValueError, match=r"not UTF-8 text .*; expected a UTF-8 file$"):
        read_templates(str(f))
