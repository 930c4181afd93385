"""The clip adapter end to end on a tiny randomly initialised CLIPConfig model saved to tmp_path."""
from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from perturb.bench.adapters.protocol import load_model  # noqa: E402
from perturb.bench.api import benchmark  # noqa: E402
from perturb.bench.fixtures import tiny_data  # noqa: E402
from perturb.bench.runner import Settings  # noqa: E402


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    from transformers import CLIPConfig, CLIPModel, CLIPTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    root = tmp_path_factory.mktemp("tiny-clip")
    chars = list(bytes_to_unicode().values())                 # a byte-level vocabulary, no merges
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab["<|startoftext|>"], vocab["<|endoftext|>"] = len(vocab), len(vocab) + 1
    CLIPTokenizer(vocab=vocab, merges=[]).save_pretrained(root)
    cfg = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, max_position_embeddings=64,
                         bos_token_id=vocab["<|startoftext|>"], eos_token_id=vocab["<|endoftext|>"]),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64,
                           num_hidden_layers=1, num_attention_heads=2),
        projection_dim=16)
    torch.manual_seed(0)          # test-only: the tiny model's random init (the library never seeds globally)
    CLIPModel(cfg).save_pretrained(root)
    (root / "preprocessor_config.json").write_text(json.dumps(
        {"crop_size": {"height": 32, "width": 32}, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.25, 0.25, 0.25]}))
    return root


def test_clip_adapter_embeds_and_runs_a_benchmark(tiny_clip):
    model = load_model(f"clip:{tiny_clip}", device="cpu", frames=3, batch_size=2)
    assert model.kind == "dual" and model.id.endswith("@3f")
    clips = [np.full((7, 40, 50, 3), v, np.uint8) for v in (0, 128, 255)]
    v = model.encode_videos(clips)
    t = model.encode_texts(["a red car", "a dog", "something longer than the others here"])
    assert v.shape == (3, 16) and t.shape == (3, 16)
    # each video embedding is a mean of unit-norm frame embeddings of identical frames -> unit norm
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(v[0], v[2])
    doc = benchmark(model, tiny_data(3), video=["translate"], severities=[1], text=["Typos"], bootstrap=0,
                    settings=Settings(progress=False, batch_size=2))
    assert len(doc["runs"]) == 2 and 0.0 <= doc["clean"]["t2v"]["R@1"] <= 1.0
    # one direct call each above, then batches of 2: (clean + perturbed) x ceil(3/2) videos, x 3 texts
    assert model.calls["videos"] == 1 + 2 * 2 and model.calls["texts"] == 1 + 2 * 3


def test_clip_adapter_rejects_missing_cuda(tiny_clip):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="CUDA"):
        load_model(f"clip:{tiny_clip}", device="cuda")
