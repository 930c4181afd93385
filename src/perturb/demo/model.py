"""The demo's retrieval model: a small dual encoder trained in seconds under a fixed seed.

Video side: hand-made features of 8 uniformly sampled frames (colour layout, colour histogram,
edge energy, optical-flow pan and zoom) through a 2-layer MLP. Text side: the mean of the bundled
MiniLM's input word-piece embeddings plus hashed words, through a linear layer. Trained with a
symmetric InfoNCE loss on :func:`perturb.demo.data.training_set`. It is a fixture that
really retrieves, not a general model.
"""
from __future__ import annotations

import hashlib
import io
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..bench.adapters.frames import FrameSpec, frame_indices

N_FRAMES = 8
HASH_DIM = 256
EMBED_DIM = 64


@contextmanager
def torch_threads(n: int = 1):
    """Run torch with ``n`` intra-op threads (tiny models lose badly to thread spin on busy CPUs)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _flow_stats(gray: list[np.ndarray]) -> np.ndarray:
    import cv2

    h, w = gray[0].shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    xs, ys = (xs - w / 2) / w, (ys - h / 2) / h
    out = []
    for a, b in zip(gray[:-1], gray[1:]):
        flow = cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 2, 9, 2, 5, 1.1, 0)
        u, v = flow[..., 0] / w, flow[..., 1] / h
        out.append([u.mean(), v.mean(), (xs * u + ys * v).mean()])
    stats = np.asarray(out, dtype=np.float32)
    return np.concatenate([stats.mean(axis=0), stats[: len(stats) // 2].mean(axis=0),
                           stats[len(stats) // 2:].mean(axis=0)]) * 40.0


def video_features(clip: np.ndarray) -> np.ndarray:
    """A fixed-length feature vector of one uint8 (T, H, W, 3) clip."""
    import cv2

    frames = np.asarray(clip)[frame_indices(len(clip), N_FRAMES)]
    small = np.stack([cv2.resize(f, (48, 48), interpolation=cv2.INTER_AREA) for f in frames])
    layout = small.reshape(len(small), 4, 12, 4, 12, 3).mean(axis=(0, 2, 4)).ravel() / 255.0
    hist = np.concatenate([np.histogram(small[..., c], bins=8, range=(0, 256))[0]
                           for c in range(3)]).astype(np.float32) / small[..., 0].size
    gray = [cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in small]
    grads = [np.hypot(cv2.Sobel(g, cv2.CV_32F, 1, 0), cv2.Sobel(g, cv2.CV_32F, 0, 1)) for g in gray]
    edges = np.mean(grads, axis=0).reshape(2, 24, 2, 24).mean(axis=(1, 3)).ravel() / 255.0
    return np.concatenate([layout, hist, edges, _flow_stats(gray)]).astype(np.float32)


@lru_cache(maxsize=1)
def _minilm() -> tuple[object, np.ndarray]:
    """The bundled MiniLM word-piece tokenizer and its input embedding table (no transformer pass)."""
    from tokenizers import Tokenizer

    from ..text.resources import minilm_path, token_embeddings

    root = minilm_path()
    tok = Tokenizer.from_file(str(root / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    table = token_embeddings(str(root))
    return tok, table


def text_features(texts: Sequence[str]) -> np.ndarray:
    """Mean MiniLM word-piece embedding plus signed hashed words, per caption."""
    tok, table = _minilm()
    out = np.zeros((len(texts), table.shape[1] + HASH_DIM), dtype=np.float32)
    for i, enc in enumerate(tok.encode_batch(list(texts))):
        ids = [t for t in enc.ids if t not in (0, 101, 102)]
        if ids:
            out[i, : table.shape[1]] = table[ids].mean(axis=0) * 10.0
        for word in str(texts[i]).lower().split():
            h = int.from_bytes(hashlib.md5(word.strip(".,;!?").encode()).digest()[:4], "little")
            out[i, table.shape[1] + h % HASH_DIM] += 1.0 if (h >> 20) & 1 else -1.0
    return out


def weights_digest(*parts: Any) -> str:
    """A short sha256 of torch modules' parameters and numpy arrays: the model's version."""
    h = hashlib.sha256()
    for part in parts:
        arrays = [p.detach().cpu().numpy() for p in part.parameters()] if hasattr(part, "parameters") else [part]
        for a in arrays:
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


class DemoModel:
    """The trained demo dual encoder (numpy in, L2-normalised numpy embeddings out)."""

    def __init__(self, video_net, text_net, mean: np.ndarray, std: np.ndarray, seed: int = 0) -> None:
        self.video_net, self.text_net = video_net.eval(), text_net.eval()
        self.mean, self.std = mean, std
        self.id = f"demo:dual-encoder-seed{seed}"        # also the embedding-cache key
        self.frame_spec = FrameSpec(N_FRAMES)           # video_features reads only these frames
        self.cache_version = weights_digest(video_net, text_net, mean, std)   # the cache keys the weights


    def _embed(self, net, x: np.ndarray) -> np.ndarray:
        import torch
        with torch.inference_mode(), torch_threads(1):
            y = net(torch.from_numpy(x))
            return torch.nn.functional.normalize(y, dim=-1).numpy()

    def encode_videos(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        feats = np.stack([video_features(c) for c in clips])
        return self._embed(self.video_net, (feats - self.mean) / self.std)

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(self.text_net, text_features(texts))


def _nets(video_in: int, text_in: int) -> tuple[Any, Any]:
    """The demo model's two untrained towers for feature widths ``video_in`` and ``text_in``."""
    import torch

    video_net = torch.nn.Sequential(torch.nn.Linear(video_in, 128), torch.nn.ReLU(), torch.nn.Linear(128, EMBED_DIM))
    return video_net, torch.nn.Sequential(torch.nn.Linear(text_in, EMBED_DIM))


def train(seed: int = 0, steps: int = 100, renders: int = 3, frames: int = 12,
          size: int = 64) -> DemoModel:
    """Train the demo model deterministically from ``seed`` (a few seconds on 2 CPU cores)."""
    import torch

    from .data import training_set

    clips, texts, labels = training_set(seed, renders, frames, size)
    vfeat = np.stack([video_features(c) for c in clips])
    mean, std = vfeat.mean(axis=0), vfeat.std(axis=0) + 1e-3
    x_v = torch.from_numpy((vfeat - mean) / std)
    x_t = torch.from_numpy(text_features(texts))
    same = torch.from_numpy(labels[:, None] == labels[None, :]).float()
    gen = torch.Generator().manual_seed(int(np.random.default_rng(seed).integers(2**31)))
    video_net, text_net = _nets(x_v.shape[1], x_t.shape[1])
    for p in [*video_net.parameters(), *text_net.parameters()]:
        with torch.no_grad():
            p.copy_(torch.randn(p.shape, generator=gen) * (0.02 if p.ndim == 1 else p.shape[1] ** -0.5))
    target = same / same.sum(dim=1, keepdim=True)
    with torch_threads(1):
        _fit(video_net, text_net, x_v, x_t, target, gen, steps)
    return DemoModel(video_net, text_net, mean, std, seed)


def _fit(video_net, text_net, x_v, x_t, target, gen, steps: int) -> None:
    """Symmetric InfoNCE (several positives per caption) with feature noise and word dropout."""
    import torch
    opt = torch.optim.AdamW([*video_net.parameters(), *text_net.parameters()], lr=3e-3, weight_decay=1e-3)
    for _ in range(steps):
        v = torch.nn.functional.normalize(video_net(x_v + 0.1 * torch.randn(x_v.shape, generator=gen)), dim=-1)
        t = torch.nn.functional.normalize(_dropout(text_net, x_t, gen), dim=-1)
        logits = t @ v.T / 0.07
        loss = -(target * logits.log_softmax(dim=1)).sum(1).mean() - (target * logits.T.log_softmax(dim=1)).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def _dropout(text_net, x, gen):
    """Text branch forward with word-feature dropout drawn from the explicit generator."""
    import torch
    keep = (torch.rand(x.shape, generator=gen) > 0.2).float() / 0.8
    return text_net(x * keep)


def recipe(seed: int) -> str:
    """What the trained weights follow: the seed, torch's version and this module's and the
    training data's code (a saved model trained by another recipe is trained again)."""
    import torch

    from . import data

    code = (Path(__file__).read_bytes(), Path(data.__file__).read_bytes())
    return hashlib.sha256(repr((seed, torch.__version__, code)).encode()).hexdigest()[:16]


def trained(path: str | Path, seed: int = 0) -> DemoModel:
    """The demo model saved at ``path`` by this recipe, else trained now and saved there (atomically),
    so that a second demo run trains nothing."""
    import torch

    from ..fileio import write_atomic

    path, made = Path(path), recipe(seed)
    if path.is_file():
        with np.load(path) as saved:
            if str(saved["recipe"]) == made:
                arrays = {k: saved[k] for k in saved.files}
                video_net, text_net = _nets(arrays["video.0.weight"].shape[1], arrays["text.0.weight"].shape[1])
                for prefix, net in (("video.", video_net), ("text.", text_net)):
                    net.load_state_dict({k[len(prefix):]: torch.from_numpy(v) for k, v in arrays.items()
                                         if k.startswith(prefix)})
                return DemoModel(video_net, text_net, arrays["mean"], arrays["std"], seed)
    model = train(seed=seed)
    arrays = {f"{prefix}{k}": v.detach().numpy() for prefix, net in (("video.", model.video_net), ("text.", model.text_net))
              for k, v in net.state_dict().items()}
    buf = io.BytesIO()
    np.savez(buf, recipe=np.str_(made), mean=model.mean, std=model.std, **arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, buf.getvalue())
    return model


@lru_cache(maxsize=1)
def demo_model() -> DemoModel:
    """The demo model trained with the fixed seed 0 (for ``callable:perturb.demo.model:demo_model``)."""
    return train(seed=0)
