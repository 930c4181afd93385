"""Tiny randomly initialised Hugging Face models with locally built tokenizers, for tests.

Each builder saves a model and its tokenizer with ``save_pretrained`` into a directory and returns
that path, so tests exercise the real offline loading and inference code.
"""
from __future__ import annotations

from pathlib import Path

CORPUS = (
    "a little girl does gymnastics",
    "a man is riding a horse on the beach",
    "two women are cooking pasta in a kitchen",
    "a dog catches a red frisbee in the park",
    "people play soccer on a green field",
    "a boy sings a happy song",
)
SPECIALS = ("[PAD]", "[EOS]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _word_tokenizer(specials: tuple[str, ...], template: str):
    """A whitespace WordLevel tokenizer over CORPUS, as a PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(CORPUS, trainers.WordLevelTrainer(special_tokens=list(specials)))
    ids = {s: tok.token_to_id(s) for s in specials}
    tok.post_processor = processors.TemplateProcessing(
        single=template, special_tokens=[(s, ids[s]) for s in specials if s in template])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", mask_token="[MASK]",
        cls_token="[CLS]", sep_token="[SEP]", eos_token="[EOS]")


def build_mlm(path: Path, seed: int = 0) -> Path:
    """A 2-layer BertForMaskedLM (hidden 32) and its tokenizer, saved under ``path``."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = _word_tokenizer(SPECIALS, "[CLS] $A [SEP]")
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                        pad_token_id=tokenizer.pad_token_id)
    with torch.random.fork_rng():          # seeded weights without touching the global stream
        torch.manual_seed(seed)
        model = BertForMaskedLM(config)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_seq2seq(path: Path, seed: int = 0) -> Path:
    """A 1-layer T5ForConditionalGeneration (d_model 32) and its tokenizer, saved under ``path``."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _word_tokenizer(SPECIALS, "$A [EOS]")
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=1,
                      num_decoder_layers=1, num_heads=2, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id,
                      decoder_start_token_id=tokenizer.pad_token_id)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = T5ForConditionalGeneration(config)
    model.generation_config.decoder_start_token_id = tokenizer.pad_token_id
    gen = model.generation_config                   # random weights: never an empty output
    gen.min_new_tokens = 3
    gen.suppress_tokens = [tokenizer.convert_tokens_to_ids(t) for t in SPECIALS if t != "[EOS]"]
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_clip(path: Path, seed: int = 0, image_size: int = 32, patch_size: int = 8, *,
               text: dict | None = None, vision: dict | None = None, projection_dim: int = 16,
               processor_size: int = 32) -> Path:
    """A 1-layer CLIPModel (hidden 32, 32x32 images, 16-d projection) with a byte-level CLIP
    tokenizer and a preprocessor config, saved under ``path``. ``text`` / ``vision`` override
    the towers' config entries and ``processor_size`` the preprocessor's (``benchmarks/gpu.py``
    builds a ViT-B/32-sized model this way)."""
    import json

    import torch
    from transformers import CLIPConfig, CLIPModel, CLIPTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    chars = list(bytes_to_unicode().values())                 # a byte-level vocabulary, no merges
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab["<|startoftext|>"], vocab["<|endoftext|>"] = len(vocab), len(vocab) + 1
    CLIPTokenizer(vocab=vocab, merges=[]).save_pretrained(path)
    cfg = CLIPConfig(
        text_config=dict(dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                              num_attention_heads=2, max_position_embeddings=64,
                              bos_token_id=vocab["<|startoftext|>"], eos_token_id=vocab["<|endoftext|>"]),
                         **(text or {})),
        vision_config=dict(dict(image_size=image_size, patch_size=patch_size, hidden_size=32, intermediate_size=64,
                                num_hidden_layers=1, num_attention_heads=2), **(vision or {})),
        projection_dim=projection_dim)
    with torch.random.fork_rng():          # seeded weights without touching the global stream
        torch.manual_seed(seed)
        model = CLIPModel(cfg)
    model.save_pretrained(path)
    (path / "preprocessor_config.json").write_text(json.dumps(
        {"size": {"shortest_edge": processor_size}, "crop_size": {"height": processor_size, "width": processor_size}, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.25, 0.25, 0.25]}))
    return path
