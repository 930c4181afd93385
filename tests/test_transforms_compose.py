"""perturb.transforms composition and per-call settings: n ops per sample in a drawn order that
replays through apply, epoch= per call (and the warning of a stale DataLoader worker copy),
return_params, a lone key for params, and layout errors that name the permute."""
from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import perturb.image as image  # noqa: E402
from perturb.text import apply as text_apply  # noqa: E402
from perturb.transforms import RandomImagePerturbation, RandomPerturbation, RandomTextPerturbation  # noqa: E402
from perturb.video import apply  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

MIXED = "rotate,translate,jumble,gaussian_noise,defocus_blur,brightness,jpeg,fog,contrast"
KEYS = [0, 7, -3, 2**40, "clip-a", "vidéo/ß.mp4"]


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    """8 distinct 4-frame 24x32 uint8 clips (B, T, H, W, 3)."""
    src = sample_clip(12)
    return np.stack([np.ascontiguousarray(src[i:i + 4, 40 + 9 * i:64 + 9 * i, 60:92]) for i in range(8)])


def as_float(batch: np.ndarray):
    return torch.from_numpy(batch).permute(0, 1, 4, 2, 3).float() / 255


def replay(x, steps, apply_one=apply):
    """A sample's recorded steps replayed one public apply call after another (None: unchanged)."""
    for step in steps or []:
        x = apply_one(x, step["op"], step["severity"], seed=step["seed"])
    return x


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b))


def test_composed_draws_for_a_fixed_seed_are_pinned() -> None:
    """n=(1, 3): each sample's first step is the one-op draw (the pinned n=1 values of
    test_transforms.py); further steps are other ops, in the order drawn."""
    t = RandomPerturbation("suite:imagenet-c", severity=(1, 5), p=0.8, seed=5, n=(1, 3))
    assert t.params(KEYS) == [
        [{"op": "pixelate", "severity": 1, "seed": 3127268762048758940},
         {"op": "fog:imagenet-c", "severity": 1, "seed": 4932417313476016563},
         {"op": "glass_blur:imagenet-c", "severity": 4, "seed": 6389266324249512970}],
        [{"op": "speckle_noise:imagenet-c", "severity": 4, "seed": 7316893936934153516},
         {"op": "zoom_blur", "severity": 5, "seed": 7692252816202109557},
         {"op": "motion_blur", "severity": 2, "seed": 6938488652818764459}],
        None,
        [{"op": "snow:imagenet-c", "severity": 3, "seed": 4494357756062053049},
         {"op": "brightness", "severity": 3, "seed": 8362904100583927267}],
        [{"op": "impulse_noise", "severity": 2, "seed": 2388246672797020609}],
        [{"op": "pixelate", "severity": 2, "seed": 4664260376047112115},
         {"op": "glass_blur:imagenet-c", "severity": 4, "seed": 9173905447219525360}]]
    one = RandomPerturbation("suite:imagenet-c", severity=(1, 5), p=0.8, seed=5)
    for epoch in (0, 2):
        assert [s and s[0] for s in t.params(KEYS, epoch=epoch)] == one.params(KEYS, epoch=epoch)
    assert repr(t) == ("RandomPerturbation(19 ops, n=(1, 3), severity={1: 0.2, 2: 0.2, 3: 0.2, 4: 0.2, 5: 0.2}, "
                       "p=0.8, seed=5, epoch=0)")


def test_n_draws_how_many_and_which_without_repeats() -> None:
    t = RandomPerturbation(MIXED, weights=[1, 1, 1, 1, 1, 1, 1, 0, 1], n=(1, 3), seed=1)
    draws = t.params(range(600))
    counts = np.bincount([len(d) for d in draws], minlength=4)
    assert counts[0] == 0 and all(150 < c < 250 for c in counts[1:])          # uniform over 1..3
    assert all(len({s["op"] for s in d}) == len(d) for d in draws)             # different ops
    assert "fog" not in {s["op"] for d in draws for s in d}                     # weight 0: never
    firsts = [tuple(s["op"] for s in d[:2]) for d in draws if len(d) > 1]
    assert len(set(firsts)) > 40                                                # the order varies too
    assert all(len(d) == 2 for d in RandomPerturbation(MIXED, n=2).params(range(50)))
    assert RandomPerturbation(MIXED, n=(1, 1)).params(KEYS) == RandomPerturbation(MIXED).params(KEYS)


@pytest.mark.parametrize("kwargs, says", [
    (dict(n=0), "n must be an int >= 1 or a (low, high) pair of ints with 1 <= low <= high (ops per sample); "
                "got 0"),
    (dict(n=(3, 1)), "n must be an int >= 1 or a (low, high) pair of ints with 1 <= low <= high (ops per sample); "
                     "got (3, 1)"),
    (dict(n=True), "n must be an int >= 1 or a (low, high) pair of ints with 1 <= low <= high (ops per sample); "
                   "got True"),
    (dict(n=(1.0, 2)), "n must be an int >= 1 or a (low, high) pair of ints with 1 <= low <= high (ops per "
                       "sample); got (1.0, 2)"),
    (dict(ops="rotate,jpeg,fog", n=(1, 4)), "n=(1, 4) asks for up to 4 different ops per sample, but the "
                                           "selection has 3 ops with weight > 0 (rotate, jpeg, fog)"),
    (dict(ops="rotate,jpeg,fog", weights=[1, 0, 0], n=2), "n=2 asks for up to 2 different ops per sample, but "
                                                          "the selection has 1 op with weight > 0 (rotate)"),
])
def test_bad_n_gets_a_one_line_error(kwargs: dict, says: str) -> None:
    with pytest.raises(ValueError) as err:
        RandomPerturbation(**{"ops": MIXED, **kwargs})
    assert str(err.value) == says


@pytest.mark.parametrize("kind", ["uint8", "float", "numpy"])
def test_a_composed_sample_replays_from_its_params_through_apply(kind: str, data: np.ndarray) -> None:
    x = {"uint8": torch.from_numpy(data), "float": as_float(data), "numpy": data}[kind]
    t = RandomPerturbation(MIXED, severity=(1, 5), p=0.9, seed=3, n=(1, 3))
    keys = [f"v{i}" for i in range(len(x))]
    out = t(x, keys=keys)
    draws = t.params(keys)
    assert None in draws and {len(d) for d in draws if d} == {1, 2, 3}
    for i, steps in enumerate(draws):
        assert same(out[i], replay(x[i], steps)), (i, steps)
    order = [5, 0, 3]                              # any batch, any position: the same sample
    part = t(x[order], keys=[keys[i] for i in order])
    assert all(same(part[j], out[i]) for j, i in enumerate(order))
    assert same(t(x[6], keys=keys[6]), out[6])


class Keyed(torch.utils.data.Dataset):
    """Clips corrupted in the loader's workers; an item is an index, or (index, epoch) from
    :class:`EpochIndices`. Each item comes with the warnings its call raised."""

    def __init__(self, data: np.ndarray, transform: RandomPerturbation) -> None:
        self.data, self.transform = data, transform

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, item):
        i, epoch = item if isinstance(item, tuple) else (item, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = self.transform(torch.from_numpy(self.data[i]), keys=i, epoch=epoch)
        return out, " | ".join(str(w.message) for w in caught)


class EpochIndices(torch.utils.data.Sampler):
    """Indices in order, each with the epoch: the sampler runs on the main process, so
    set_epoch reaches it even when the workers persist."""

    def __init__(self, n: int) -> None:
        self.n, self.epoch = n, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self):
        return iter([(i, self.epoch) for i in range(self.n)])

    def __len__(self) -> int:
        return self.n


def stuck_guard(_: int) -> None:
    import faulthandler
    faulthandler.dump_traceback_later(50, exit=True)


def two_epochs(data: np.ndarray, t: RandomPerturbation, with_epoch: bool) -> tuple[list, list]:
    sampler = EpochIndices(len(data)) if with_epoch else None
    loader = torch.utils.data.DataLoader(Keyed(data, t), batch_size=2, num_workers=2, persistent_workers=True,
                                         sampler=sampler, worker_init_fn=stuck_guard, timeout=60)
    outs, said = [], []
    for epoch in range(2):
        t.set_epoch(epoch)
        if sampler is not None:
            sampler.set_epoch(epoch)
        batches = list(loader)
        outs.append(torch.cat([x for x, _ in batches]))
        said.append([w for _, ws in batches for w in ws if w])
    return outs, said


def test_persistent_workers_with_epoch_per_call_draw_each_epoch(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=4, n=(1, 2))
    outs, said = two_epochs(data, t, with_epoch=True)
    assert said == [[], []]
    for epoch, out in enumerate(outs):
        want = t(torch.from_numpy(data), keys=range(len(data)), epoch=epoch)
        assert torch.equal(out, want)
    assert sum(not torch.equal(a, b) for a, b in zip(*outs)) >= 6


def test_persistent_workers_without_epoch_warn_once_per_worker_copy(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=4)
    outs, said = two_epochs(data, t, with_epoch=False)
    assert torch.equal(outs[0], outs[1])                     # the stale copies repeat epoch 0 ...
    assert said[0] == [] and len(said[1]) == 2               # ... and each of the 2 copies says so once
    for message in said[1]:
        assert message.startswith("RandomPerturbation: key ") and " is drawn again at epoch 0 in this " \
            "DataLoader worker, so its draws repeat" in message
        assert message.endswith("pass the epoch with each call, t(x, keys=..., epoch=epoch)")


def test_the_main_process_repeats_keys_without_a_warning(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = t(data, keys=range(8))
        assert np.array_equal(t(data, keys=range(8)), first)


def test_epoch_per_call_draws_as_set_epoch_and_leaves_it(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=2, n=(1, 3))
    keys = list(range(8))
    at2 = t(data, keys=keys, epoch=2)
    assert t.epoch == 0 and t.params(keys, epoch=2) != t.params(keys)
    t.set_epoch(2)
    assert np.array_equal(t(data, keys=keys), at2) and t.params(keys) == t.params(keys, epoch=2)
    for bad in (-1, 1.0, True):
        with pytest.raises(ValueError, match=rf"^epoch must be a non-negative int; got {bad!r}$"):
            t(data, keys=keys, epoch=bad)
        with pytest.raises(ValueError, match=rf"^epoch must be a non-negative int; got {bad!r}$"):
            t.params(keys, epoch=bad)


@pytest.mark.parametrize("n", [1, (1, 3)])
def test_return_params_equals_params(n, data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, p=0.7, seed=6, n=n)
    keys = [10, 11, 12, 13, 14, 15, 16, 17]
    out, params = t(as_float(data), keys=keys, epoch=1, return_params=True)
    assert params == t.params(keys, epoch=1) and torch.equal(out, t(as_float(data), keys=keys, epoch=1))
    one, draw = t(data[3], keys=13, epoch=1, return_params=True)       # one clip: its one draw
    assert draw == t.params(keys=13, epoch=1) == params[3] and np.array_equal(one, out_levels(out)[3])
    content, by_content = t(data, return_params=True)
    assert by_content == t.params(t.content_keys(data)) and np.array_equal(content, t(data))


def out_levels(out) -> np.ndarray:
    return (out * 255).round().to(torch.uint8).permute(0, 1, 3, 4, 2).numpy()


def test_a_lone_key_gives_its_one_draw() -> None:
    t = RandomPerturbation(MIXED, seed=8)
    for key, same_key in [(7, [7]), (np.int64(7), [7]), (torch.tensor(7), [7]), ("a/b.mp4", ["a/b.mp4"])]:
        assert t.params(keys=key) == t.params(same_key)[0]
    assert t.params(keys=7, epoch=3) == t.params([7], epoch=3)[0]
    with pytest.raises(ValueError, match=r"^a sample key must be an int or a str \(a sample id, a path\); got bool"):
        t.params(keys=True)


LAYOUTS = [
    (lambda d: as_float(d).permute(0, 2, 1, 3, 4), "expected a float batch laid out (B, T, 3, H, W); got torch "
     "float32 with shape (3, 3, 4, 24, 32), which reads as (B, 3, T, H, W), channels before time, as kornia lays "
     "out video: use batch.permute(0, 2, 1, 3, 4)"),
    (lambda d: torch.from_numpy(d).float() / 255, "expected a float batch laid out (B, T, 3, H, W); got torch "
     "float32 with shape (3, 4, 24, 32, 3), which reads as (B, T, H, W, 3), channels last: use "
     "batch.permute(0, 1, 4, 2, 3)"),
    (lambda d: torch.from_numpy(d).permute(0, 4, 1, 2, 3), "expected a uint8 batch laid out (B, T, H, W, 3); got "
     "torch uint8 with shape (3, 3, 4, 24, 32), which reads as (B, 3, T, H, W), channels before time, as kornia "
     "lays out video: use batch.permute(0, 2, 3, 4, 1)"),
    (lambda d: torch.from_numpy(d).permute(0, 1, 4, 2, 3), "expected a uint8 batch laid out (B, T, H, W, 3); got "
     "torch uint8 with shape (3, 4, 3, 24, 32), which reads as (B, T, 3, H, W), channels first: use "
     "batch.permute(0, 1, 3, 4, 2)"),
    (lambda d: np.ascontiguousarray(d.transpose(0, 4, 1, 2, 3)), "expected a uint8 batch laid out (B, T, H, W, 3); "
     "got numpy uint8 with shape (3, 3, 4, 24, 32), which reads as (B, 3, T, H, W), channels before time, as "
     "kornia lays out video: use batch.transpose(0, 2, 3, 4, 1)"),
    (lambda d: as_float(d)[0].permute(1, 0, 2, 3), "expected a float clip laid out (T, 3, H, W); got torch float32 "
     "with shape (3, 4, 24, 32), which reads as (3, T, H, W), channels before time, as kornia lays out video: use "
     "clip.permute(1, 0, 2, 3)"),
]


@pytest.mark.parametrize("make, says", LAYOUTS, ids=[s.split("reads as ")[1].split(":")[0] for _, s in LAYOUTS])
def test_layout_errors_name_the_permute_that_fixes_them(make, says: str, data: np.ndarray) -> None:
    t = RandomPerturbation("rotate", seed=0)
    bad = make(data[:3])
    single = len(bad.shape) == 4
    keys = 0 if single else [0, 1, 2]
    with pytest.raises(ValueError) as err:
        t(bad, keys=keys)
    assert str(err.value) == says
    fix = says.rsplit(".", 1)[1]                           # "permute(0, 2, 1, 3, 4)": the named fix works
    axes = tuple(int(a) for a in fix[fix.index("(") + 1:-1].split(","))
    fixed = bad.permute(*axes) if hasattr(bad, "permute") else np.ascontiguousarray(bad.transpose(axes))
    assert t(fixed, keys=keys).shape == fixed.shape


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return np.stack([cv2.resize(f, (32, 24), interpolation=cv2.INTER_AREA) for f in sample_clip(12)[::2]])


@pytest.mark.parametrize("kind", ["numpy", "torch float"])
def test_image_batches_compose_and_take_the_same_call_settings(kind: str, images: np.ndarray) -> None:
    batch = images if kind == "numpy" else torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    t = RandomImagePerturbation(severity=(1, 5), p=0.9, seed=2, n=(1, 3))
    keys = [101, 102, "a/b.JPEG", 104, 105, 106]
    out, params = t(batch, keys=keys, epoch=1, return_params=True)
    assert params == t.params(keys, epoch=1) == RandomPerturbation("suite:imagenet-c", p=0.9, seed=2,
                                                                  n=(1, 3)).params(keys, epoch=1)
    assert max(len(d) for d in params if d) > 1
    for i, steps in enumerate(params):
        assert same(out[i], replay(batch[i], steps, image.apply)), (i, steps)
    alone, draw = t(batch[2], keys="a/b.JPEG", epoch=1, return_params=True)
    assert draw == params[2] and same(alone, out[2])


def test_captions_compose_too() -> None:
    t = RandomTextPerturbation("Keyboard,OCR,Typos,DropFirst,AppendIrr", severity=(1, 3), seed=3, n=(1, 3))
    captions = ["a man is playing a guitar on stage", "two women are cooking pasta in a kitchen",
                "a dog runs in the park", "a cat sleeps on a sofa"]
    out, params = t(captions, keys=[1, 2, 3, 4], epoch=2, return_params=True)
    assert params == t.params([1, 2, 3, 4], epoch=2) and {len(d) for d in params} > {1}
    for caption, got, steps in zip(captions, out, params):
        assert got == replay(caption, steps, text_apply)
    assert t(captions[1], keys=2, epoch=2) == out[1]
