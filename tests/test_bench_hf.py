"""hf: adapters on tiny randomly initialised checkpoints of each family, loaded through ``hf:PATH``.

Each family's output is checked against calling the transformers model directly on the same
pixel and token inputs (to 1e-5).
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from hf_models import BUILDERS  # noqa: E402
from perturb.bench.adapters.hf import load_hf  # noqa: E402
from perturb.bench.adapters.hf.runtime import features, sample  # noqa: E402
from perturb.bench.adapters.hf.checkpoint import HfSpec, parse_spec  # noqa: E402
from perturb.bench.adapters.hf.families import BY_NAME, pick_family, pick_mode  # noqa: E402
from perturb.bench.adapters.hf.yesno import yes_no_margin  # noqa: E402
from perturb.bench.adapters.factory import load_model  # noqa: E402
from perturb.bench.adapters.model_options import ModelOptions  # noqa: E402
from bench_fixtures import tiny_items  # noqa: E402

CLIPS = [it.meta["clip"] for it in tiny_items(3)]             # (8, 32, 32, 3) uint8 each
TEXTS = ["a red cat scene number 0", "a dog", "a Boat scene number 2 in the Moon"]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    cache: dict[str, object] = {}

    def get(name: str):
        if name not in cache:
            cache[name] = BUILDERS[name](root / name)
        return cache[name]
    return get


def _load(ckpt, name: str, mode: str = "", **kw):
    kw = {"device": "cpu", "batch_size": 2, **kw}
    return load_hf(f"{ckpt(name)}{'#' + mode if mode else ''}", ModelOptions(**kw))


def _frames(adapter, clips=CLIPS):
    return adapter.pixels(np.concatenate([sample(c, adapter.frame_spec) for c in clips]), adapter.runtime)


# ---------- spec and family ----------

def test_parse_spec_and_family_from_config():
    assert parse_spec("org/name@v1.0#itm") == HfSpec("org/name", "v1.0", "itm")
    assert parse_spec("/some/path") == HfSpec("/some/path")
    for bad in ("", "name@", "name#rank", "@rev"):
        with pytest.raises(ValueError, match="hf:NAME_OR_PATH"):
            parse_spec(bad)
    assert pick_family({"architectures": ["XCLIPModel"], "model_type": "clip"}).name == "xclip"
    assert pick_family({"model_type": "siglip2"}).name == "siglip2"
    with pytest.raises(ValueError, match="no hf family.*model_type='bert'"):
        pick_family({"architectures": ["BertModel"], "model_type": "bert"})
    assert pick_mode(BY_NAME["xclip"], None) == "logits" and pick_mode(BY_NAME["blip"], "embed") == "embed"
    with pytest.raises(ValueError, match="supports #embed; got #yesno"):
        pick_mode(BY_NAME["clip"], "yesno")


def test_model_id_names_revision_mode_and_frames(ckpt):
    m = load_model(f"hf:{ckpt('xclip')}",
                   ModelOptions(device="cpu"))            # frames from vision_config.num_frames
    assert m.id == f"hf:{ckpt('xclip')}@local#logits@4f" and m.kind == "cross"
    assert m.impl.frame_spec.num_frames == 4 and m.impl.frame_spec.size == 32
    clip = load_model(f"clip:{ckpt('clip')}", ModelOptions(device="cpu", frames=3))
    assert clip.id == f"hf:{ckpt('clip')}@local#embed@3f" and clip.impl.family.name == "clip"
    card = m.impl.card()
    assert card == {"family": "xclip", "class": "XCLIPModel", "checkpoint": str(ckpt("xclip")), "revision": "local",
                    "requested_revision": None,
                    "mode": "logits", "frames": 4, "resolution": "32x32", "frame_sampling": "centre",
                    "dtype": "float32", "autocast": "none",
                    "device": "cpu"}


SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub_clip(ckpt, tmp_path, monkeypatch):
    """The tiny CLIP as hub model org/tiny-clip in an offline Hugging Face cache (snapshot SHA)."""
    import shutil
    repo = tmp_path / "hub" / "models--org--tiny-clip"
    shutil.copytree(ckpt("clip"), repo / "snapshots" / SHA)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    return "org/tiny-clip"


def test_hub_names_resolve_offline_to_a_commit(ckpt, hub_clip):
    """A hub name read from the Hugging Face cache: the model id carries the snapshot's commit."""
    sha = SHA
    m = load_model("hf:org/tiny-clip@main", ModelOptions(device="cpu", frames=2))
    assert m.id == f"hf:org/tiny-clip@{sha}#embed@2f"
    assert m.impl.card()["revision"] == sha and m.impl.card()["requested_revision"] == "main"
    local = load_model(f"hf:{ckpt('clip')}", ModelOptions(device="cpu", frames=2))
    assert np.array_equal(m.encode_texts(TEXTS), local.encode_texts(TEXTS))


def test_a_hub_checkpoints_config_is_resolved_once_per_process(hub_clip, monkeypatch):
    """The early check, the family's config and the commit in the model id share one resolution
    of config.json (each hub file is looked up once, however often it is asked for)."""
    import huggingface_hub
    from perturb.bench.adapters.factory import check_available
    asked: list[str] = []
    real = huggingface_hub.hf_hub_download

    def counting(repo_id, filename, **kw):
        asked.append(filename)
        return real(repo_id, filename, **kw)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", counting)
    check_available(f"hf:{hub_clip}")                     # perturb bench's early check
    first = load_model(f"hf:{hub_clip}", ModelOptions(device="cpu", frames=2))
    second = load_model(f"hf:{hub_clip}", ModelOptions(device="cpu", frames=3))
    assert first.id == f"hf:{hub_clip}@{SHA}#embed@2f" and second.id == f"hf:{hub_clip}@{SHA}#embed@3f"
    assert asked.count("config.json") == 1 and "preprocessor_config.json" in asked
    assert sorted(asked) == sorted(set(asked))


def test_frame_counts_the_model_cannot_take_are_refused(ckpt):
    with pytest.raises(ValueError, match="exactly 4 frames .*got --frames 8"):
        _load(ckpt, "xclip", frames=8)
    assert _load(ckpt, "qwen2_vl", frames=3).frames == 4        # rounded to temporal_patch_size as Qwen's processor
    with pytest.raises(ValueError, match="supports #logits, #embed; got #itm"):
        _load(ckpt, "xclip", "itm")


# ---------- dual encoders ----------

@pytest.mark.parametrize("name", ["clip", "siglip", "siglip2"])
def test_frame_dual_encoders_match_the_model(ckpt, name):
    a = _load(ckpt, name, frames=3)
    v, t = a.encode_videos(CLIPS), a.encode_texts(TEXTS)
    dim = a.model.config.projection_dim if name == "clip" else a.model.config.text_config.hidden_size
    assert v.shape == (3, dim) and t.shape == (3, dim) and v.dtype == t.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5) and np.allclose(np.linalg.norm(t, axis=1), 1, atol=1e-5)
    with torch.no_grad():
        f = features(a.model.get_image_features(**a.image_inputs(_frames(a))))
        f = f / f.norm(dim=-1, keepdim=True)
        ref_v = f.view(3, 3, -1).mean(1)
        texts = [s.lower() for s in TEXTS] if name == "siglip2" else TEXTS
        tok = a.tokenizer(texts, padding="max_length" if name != "clip" else True, truncation=True,
                          max_length=a.max_length, return_tensors="pt")
        kw = {} if name == "siglip" else {"attention_mask": tok["attention_mask"]}
        ref_t = features(a.model.get_text_features(input_ids=tok["input_ids"], **kw))
    assert np.allclose(v, (ref_v / ref_v.norm(dim=-1, keepdim=True)).numpy(), atol=1e-5)
    assert np.allclose(t, (ref_t / ref_t.norm(dim=-1, keepdim=True)).numpy(), atol=1e-5)


def test_siglip_text_rules(ckpt):
    s1, s2 = _load(ckpt, "siglip"), _load(ckpt, "siglip2")
    assert s1.text_inputs(["a dog"])["input_ids"].shape == (1, 16) and "attention_mask" not in s1.text_inputs(["a"])
    assert s2.text_inputs(["a dog"])["input_ids"].shape == (1, 64)
    assert np.array_equal(s2.encode_texts(["A RED Cat"]), s2.encode_texts(["a red cat"]))   # lower-cased
    assert not np.array_equal(s1.encode_texts(["A RED Cat"]), s1.encode_texts(["a red cat"]))


def test_siglip2_patches_follow_the_processor_layout(ckpt):
    a = _load(ckpt, "siglip2")
    pix = torch.arange(2 * 3 * 32 * 32, dtype=torch.float32).view(2, 3, 32, 32)
    got = a.image_inputs(pix)
    assert got["pixel_values"].shape == (2, 16, 8 * 8 * 3) and got["spatial_shapes"].tolist() == [[4, 4]] * 2
    # patch (row 1, col 2) of image 1, pixels in (y, x, channel) order as Siglip2ImageProcessor flattens them
    expect = pix[1, :, 8:16, 16:24].permute(1, 2, 0).reshape(-1)
    assert torch.equal(got["pixel_values"][1, 1 * 4 + 2], expect)


def test_xclip_embed_and_blip_embed_match_the_model(ckpt):
    x = _load(ckpt, "xclip", "embed")
    v, t = x.encode_videos(CLIPS), x.encode_texts(TEXTS)
    with torch.no_grad():
        ref = features(x.model.get_video_features(**x.video_inputs(CLIPS)))
    assert v.shape == (3, 16) and np.allclose(v, (ref / ref.norm(dim=-1, keepdim=True)).numpy(), atol=1e-5)
    assert np.allclose(np.linalg.norm(t, axis=1), 1, atol=1e-5)
    b = _load(ckpt, "blip", "embed", frames=1)
    bv, bt = b.encode_videos(CLIPS), b.encode_texts(TEXTS)
    with torch.no_grad():                     # forward without the ITM head returns the ITC cosine matrix
        tok = b.text_inputs(TEXTS)
        sim = b.model(pixel_values=_frames(b), use_itm_head=False, **tok).itm_score
    assert np.allclose(bv @ bt.T, sim.numpy(), atol=1e-5)


# ---------- cross-encoders ----------

def test_xclip_scores_are_the_models_logits(ckpt):
    x = _load(ckpt, "xclip", batch_size=1)
    pairs = [(0, 0), (0, 2), (2, 1), (1, 1)]
    got = x.score([CLIPS[i] for i, _ in pairs], [TEXTS[j] for _, j in pairs])
    with torch.no_grad():
        logits = x.model(**x.video_inputs(CLIPS), **x.text_inputs(TEXTS)).logits_per_video
    assert got.shape == (4,) and np.allclose(got, [logits[i, j].item() for i, j in pairs], atol=1e-5)


@pytest.mark.parametrize("name", ["blip", "blip2"])
def test_itm_scores_are_the_mean_frame_log_odds(ckpt, name):
    a = _load(ckpt, name, frames=2, batch_size=3)
    got = a.score([CLIPS[0], CLIPS[1], CLIPS[0]], [TEXTS[0], TEXTS[1], TEXTS[2]])
    pix = _frames(a, CLIPS[:2]).view(2, 2, 3, 32, 32)
    want = []
    with torch.no_grad():
        for ci, ti in ((0, 0), (1, 1), (0, 2)):
            tok = a.tokenizer([TEXTS[ti]] * 2, return_tensors="pt", padding=True)
            kw = {"use_image_text_matching_head": True} if name == "blip2" else {"use_itm_head": True}
            out = a.model(pixel_values=pix[ci], input_ids=tok["input_ids"], attention_mask=tok["attention_mask"], **kw)
            logits = out.logits_per_image if name == "blip2" else out.itm_score
            want.append((logits[:, 1] - logits[:, 0]).mean().item())
    assert got.shape == (3,) and np.allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl", "llava_next_video", "llava_onevision", "video_llava"])
def test_yes_no_scores_match_the_full_model(ckpt, name):
    a = _load(ckpt, name, frames=2, batch_size=3)
    got = a.score(CLIPS, TEXTS)
    yes, no = a.tokenizer.convert_tokens_to_ids(["Yes", "yes"]), a.tokenizer.convert_tokens_to_ids(["No", "no"])
    want = []
    with torch.no_grad():
        for clip, text in zip(CLIPS, TEXTS):
            tokens = a.clip_tokens(a.video_inputs([clip]), 1)[0]
            prompt = a.prompt(text, tokens)
            assert prompt.count(a.placeholder) == tokens and "Does this video match the caption" in prompt
            tok = a.tokenizer([prompt], return_tensors="pt", add_special_tokens=False)
            extra = {"mm_token_type_ids": (tok["input_ids"] == a.model.config.video_token_id).long() * 2} \
                if name.startswith("qwen") else {}
            logits = a.model(**tok, **a.video_inputs([clip]), **extra).logits[0, -1].log_softmax(-1)
            want.append((logits[yes].logsumexp(0) - logits[no].logsumexp(0)).item())
    assert got.shape == (3,) and np.allclose(got, want, atol=1e-5)


def test_qwen2_vl_video_patches_follow_the_processor_layout(ckpt):
    a = _load(ckpt, "qwen2_vl", frames=4)
    clip = np.random.default_rng(0).integers(0, 256, (4, 16, 16, 3), dtype=np.uint8)
    got = a.video_inputs([clip])
    pix = a.pixels(clip, a.runtime)                                  # (4, 3, 16, 16): within the pixel budget
    assert a.grid(pix) == (2, 4, 4) and a.video_tokens((2, 4, 4)) == 2 * 4 * 4 // 4
    x = got["pixel_values_videos"].view(2, 2, 2, 2, 2, 3, 2, 4, 4)  # t, h/m, w/m, m, m, c, tp, p, p
    # temporal group 1, merged block (1, 0), in-block (0, 1): patch rows 8:12, cols 4:8 of frames 2 and 3
    assert torch.equal(x[1, 1, 0, 0, 1], pix[2:4, :, 8:12, 4:8].permute(1, 0, 2, 3))
    assert got["video_grid_thw"].tolist() == [[2, 4, 4]]


def test_yes_no_ranks_a_planted_yes_first(ckpt):
    logits = torch.zeros(4, 10)
    logits[2, 3] = 4.0                                               # token 3 = "yes" planted on row 2
    assert yes_no_margin(logits, [3], [5]).argmax().item() == 2
    a = _load(ckpt, "qwen2_vl", frames=2, batch_size=4)
    vocab = a.model.config.text_config.vocab_size

    class Planted(torch.nn.Module):                                  # the LM head, answering yes on row 2 only
        def forward(self, h):
            out = torch.zeros(h.shape[0], vocab)
            out[2, a.yes[0]] = 5.0
            out[:, a.no[0]] = 1.0
            return out
    a.model.lm_head = Planted()
    scores = a.score(CLIPS + CLIPS[:1], TEXTS + TEXTS[:1])
    assert np.argsort(-scores)[0] == 2 and scores[2] > 0 > scores[0]


# ---------- transformers 4.x / 5.x outputs and the runtime ----------

def test_tensor_outputs_of_transformers_4_give_the_same_embeddings(ckpt, monkeypatch):
    a = _load(ckpt, "clip", frames=2)
    v5, t5 = a.encode_videos(CLIPS), a.encode_texts(TEXTS)
    for fn in ("get_image_features", "get_text_features"):           # 4.x returned the pooled tensor itself
        orig = getattr(a.model, fn)
        monkeypatch.setattr(a.model, fn, lambda *args, _o=orig, **kw: _o(*args, **kw).pooler_output)
    assert np.array_equal(a.encode_videos(CLIPS), v5) and np.array_equal(a.encode_texts(TEXTS), t5)
    with pytest.raises(TypeError, match="pooler_output"):
        features(object())


def test_runtime_dtype_precision_and_batches(ckpt):
    ref = _load(ckpt, "clip", frames=2).encode_videos(CLIPS)
    bf = _load(ckpt, "clip", frames=2, precision="bf16")             # the CUDA autocast path, run on CPU
    assert bf.card()["autocast"] == "bfloat16" and bf.card()["dtype"] == "float32"
    assert np.allclose(bf.encode_videos(CLIPS), ref, atol=0.05) and not np.array_equal(bf.encode_videos(CLIPS), ref)
    half = _load(ckpt, "clip", frames=2, dtype="bfloat16", precision="fp32")
    assert half.card()["dtype"] == "bfloat16" and half.encode_videos(CLIPS).dtype == np.float32
    auto = _load(ckpt, "clip", frames=2, batch_size=0)
    assert np.allclose(auto.encode_videos(CLIPS), ref, atol=1e-6)
    for bad, match in (({"dtype": "int8"}, "dtype must be"), ({"precision": "tf32"}, "precision must be"),
                       ({"batch_size": -1}, "batch_size must be")):
        with pytest.raises(ValueError, match=match):
            _load(ckpt, "clip", **bad)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            _load(ckpt, "clip", device="cuda")


def test_automatic_batch_halves_on_out_of_memory():
    from perturb.bench.adapters.hf.runtime import Runtime
    seen = []

    def run(s):
        seen.append(s.stop - s.start)
        if s.stop - s.start > 8:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return list(range(s.start, s.stop))
    out = [x for chunk in Runtime(device="cpu", batch_size=0).batches(20, run) for x in chunk]
    assert out == list(range(20)) and seen == [20, 16, 8, 8, 4]          # 32 -> 16 -> 8, then the tail
    with pytest.raises(torch.cuda.OutOfMemoryError):                     # a fixed batch size is kept
        list(Runtime(device="cpu", batch_size=16).batches(20, run))


def test_pixels_are_made_in_float32_on_cpu_and_in_half_only_on_cuda_under_autocast(monkeypatch):
    from perturb.bench.adapters.hf.runtime import Runtime
    assert Runtime(device="cpu", precision="fp16").pixel_dtype == torch.float32
    rt = Runtime(device="cpu")
    monkeypatch.setattr(rt, "device", "cuda")                           # the dtype rule alone, no device
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert rt.pixel_dtype == torch.float16
    rt.precision = "fp32"
    assert rt.pixel_dtype == torch.float32
