"""Tiny randomly initialised checkpoints of every hf family, saved with ``save_pretrained`` for tests.

Each builder writes config, weights and a word-level tokenizer built offline into a folder and
returns it, so ``hf:PATH`` runs the real loading code. Hidden sizes 16-32, one layer, 16-32 px.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import hf_classifiers
from bench_fixtures import WORDS
from tiny_models import build_clip  # noqa: F401  (the CLIP family's tiny model, shared with the runner tests)

SPECIALS = ("[PAD]", "[EOS]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[BOS]")
QWEN_SPECIALS = ("<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|video_pad|>",
                 "<|image_pad|>")
CORPUS = (" ".join(WORDS) + " a scene number 0 1 2 3 4 5 6 7 8 9 does this video match the caption "
          "answer yes no Yes No or ? : . user assistant USER ASSISTANT \n", "a man is riding a horse")
QWEN_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
                 "{% if c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
                 "{% else %}{{ c['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SMALL = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
VISION = dict(SMALL, image_size=32, patch_size=8)


def word_tokenizer(extra: tuple[str, ...] = (), template: str = "[CLS] $A [SEP]") -> Any:
    """A whitespace WordLevel tokenizer over CORPUS (plus ``extra`` special tokens), as a fast tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(CORPUS, trainers.WordLevelTrainer(special_tokens=list(SPECIALS + extra)))
    specials = [(s, tok.token_to_id(s)) for s in SPECIALS if s in template]
    tok.post_processor = processors.TemplateProcessing(single=template, special_tokens=specials)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", eos_token="[EOS]",
                                   bos_token="[BOS]", mask_token="[MASK]")
    if extra:
        fast.add_special_tokens({"additional_special_tokens": list(extra)})
    return fast


def _save(path: Path, make: Callable[[], Any], tokenizer: Any, preprocessor: dict | None = None,
          seed: int = 0) -> Path:
    import torch
    with torch.random.fork_rng():            # seeded weights without touching the global stream
        torch.manual_seed(seed)
        model = make()
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    if preprocessor is not None:
        (path / "preprocessor_config.json").write_text(json.dumps(preprocessor))
    return path


def _text(tok: Any, **kw: Any) -> dict[str, Any]:
    return {**SMALL, "vocab_size": len(tok), "max_position_embeddings": 64, "pad_token_id": tok.pad_token_id,
            "bos_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id, **kw}


def build_siglip(path: Path, vision: dict | None = None) -> Path:
    from transformers import SiglipConfig, SiglipModel
    tok = word_tokenizer(template="$A [EOS]")
    cfg = SiglipConfig(text_config=_text(tok, max_position_embeddings=16), vision_config=(vision or VISION))
    return _save(path, lambda: SiglipModel(cfg), tok)


def build_siglip2(path: Path, vision: dict | None = None) -> Path:
    from transformers import Siglip2Config, Siglip2Model
    tok = word_tokenizer(template="$A [EOS]")
    cfg = Siglip2Config(text_config=_text(tok), vision_config=vision or dict(SMALL, patch_size=8, num_patches=16))
    return _save(path, lambda: Siglip2Model(cfg), tok)


def build_xclip(path: Path, num_frames: int = 4, vision: dict | None = None) -> Path:
    from transformers import XCLIPConfig, XCLIPModel
    tok = word_tokenizer()
    cfg = XCLIPConfig(text_config=_text(tok), projection_dim=16, prompt_layers=1, prompt_num_attention_heads=2,
                      vision_config=dict((vision or VISION), num_frames=num_frames, mit_hidden_size=16,
                                         mit_intermediate_size=32, mit_num_hidden_layers=1,
                                         mit_num_attention_heads=2))
    return _save(path, lambda: XCLIPModel(cfg), tok)


def build_blip(path: Path, vision: dict | None = None) -> Path:
    from transformers import BlipConfig, BlipForImageTextRetrieval
    tok = word_tokenizer()
    cfg = BlipConfig(text_config=_text(tok, encoder_hidden_size=32, sep_token_id=tok.sep_token_id),
                     vision_config=(vision or VISION), projection_dim=16, image_text_hidden_size=16)
    return _save(path, lambda: BlipForImageTextRetrieval(cfg), tok)


def build_blip2(path: Path, vision: dict | None = None) -> Path:
    from transformers import Blip2Config, Blip2ForImageTextRetrieval
    tok = word_tokenizer()
    cfg = Blip2Config(vision_config=(vision or VISION), num_query_tokens=4, image_text_hidden_size=16,
                      qformer_config=dict(SMALL, vocab_size=len(tok), encoder_hidden_size=32,
                                          max_position_embeddings=64, pad_token_id=tok.pad_token_id,
                                          use_qformer_text_input=True),
                      text_config=dict(model_type="opt", vocab_size=len(tok), hidden_size=32, ffn_dim=64,
                                       num_hidden_layers=1, num_attention_heads=2, word_embed_proj_dim=32))
    return _save(path, lambda: Blip2ForImageTextRetrieval(cfg), tok)


def build_qwen2_vl(path: Path, v25: bool = False, patch_size: int = 4) -> Path:
    """A tiny Qwen2-VL (or, with ``v25``, Qwen2.5-VL) with a Qwen-style chat template."""
    import transformers
    tok = word_tokenizer(QWEN_SPECIALS, template="$A")
    tok.chat_template = QWEN_TEMPLATE
    ids = {s: tok.convert_tokens_to_ids(s) for s in QWEN_SPECIALS}
    vision = dict(depth=1, hidden_size=32, num_heads=2, patch_size=patch_size, spatial_merge_size=2,
                  temporal_patch_size=2)
    vision.update(dict(intermediate_size=32, out_hidden_size=32,
                       window_size=8 if patch_size == 4 else 112, fullatt_block_indexes=[0])
                  if v25 else dict(embed_dim=16, mlp_ratio=2))
    prefix = "Qwen2_5_VL" if v25 else "Qwen2VL"
    cfg = getattr(transformers, f"{prefix}Config")(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                         bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                          "mrope_section": [2, 3, 3]}),
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    model_cls = getattr(transformers, f"{prefix}ForConditionalGeneration")
    # pixel budgets as the hub's video_preprocessor_config.json has them, scaled to the tiny patch
    budget = {"min_pixels": 8 * 8, "max_pixels": 16 * 16, "patch_size": 4, "merge_size": 2, "temporal_patch_size": 2}
    return _save(path, lambda: model_cls(cfg), tok, budget)


def _lm_text(tok: Any, model_type: str) -> dict[str, Any]:
    """A one-layer language model config of ``model_type`` over ``tok``'s vocabulary."""
    return dict(model_type=model_type, vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                max_position_embeddings=512, pad_token_id=tok.pad_token_id)


def _media_tokens(tok: Any) -> dict[str, int]:
    return {"video_token_index": tok.convert_tokens_to_ids("<video>"),
            "image_token_index": tok.convert_tokens_to_ids("<image>")}


def build_llava_next_video(path: Path, vision: dict | None = None) -> Path:
    from transformers import LlavaNextVideoConfig, LlavaNextVideoForConditionalGeneration
    tok = word_tokenizer(("<video>", "<image>"), template="$A")
    cfg = LlavaNextVideoConfig(
        vision_config=dict((vision or VISION), model_type="clip_vision_model", projection_dim=16),
        text_config=_lm_text(tok, "llama"),
        **_media_tokens(tok),
        vision_feature_layer=-1, spatial_pool_stride=2, image_grid_pinpoints=[[32, 32]])
    return _save(path, lambda: LlavaNextVideoForConditionalGeneration(cfg), tok)


def build_llava_onevision(path: Path, vision: dict | None = None) -> Path:
    from transformers import LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration
    tok = word_tokenizer(("<video>", "<image>", "<|im_start|>", "<|im_end|>"), template="$A")
    cfg = LlavaOnevisionConfig(
        vision_config=dict((vision or VISION), model_type="siglip_vision_model"),
        text_config=_lm_text(tok, "qwen2"),
        **_media_tokens(tok),
        vision_feature_layer=-1, image_grid_pinpoints=[[32, 32]])
    return _save(path, lambda: LlavaOnevisionForConditionalGeneration(cfg), tok)


def build_video_llava(path: Path, vision: dict | None = None) -> Path:
    from transformers import VideoLlavaConfig, VideoLlavaForConditionalGeneration
    tok = word_tokenizer(("<video>", "<image>"), template="$A")
    cfg = VideoLlavaConfig(
        vision_config=dict((vision or VISION), model_type="clip_vision_model", projection_dim=16),
        text_config=_lm_text(tok, "llama"),
        **_media_tokens(tok),
        vision_feature_layer=-1)
    return _save(path, lambda: VideoLlavaForConditionalGeneration(cfg), tok)


BUILDERS = {"clip": build_clip, "siglip": build_siglip, "siglip2": build_siglip2, "xclip": build_xclip,
            "blip": build_blip, "blip2": build_blip2, "qwen2_vl": build_qwen2_vl,
            "qwen2_5_vl": lambda path: build_qwen2_vl(path, v25=True),
            "llava_next_video": build_llava_next_video, "llava_onevision": build_llava_onevision,
            "video_llava": build_video_llava, **hf_classifiers.BUILDERS}
