"""perturb.transforms batches: a batch is validated once per call, and one op for every sample renders
the batch as a whole (no gather, clone or scatter) with apply's output, in memory of its own."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.transforms import RandomPerturbation  # noqa: E402
from perturb.video import apply  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

MIXED = "rotate,jumble,gaussian_noise,contrast,jpeg,fog,temporal_blur"


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    """6 distinct 4-frame 24x32 uint8 clips of real content (B, T, H, W, 3)."""
    src = sample_clip(10)
    return np.stack([np.ascontiguousarray(src[i:i + 4, 40 + 9 * i:64 + 9 * i, 60:92]) for i in range(6)])


def kinds(data: np.ndarray) -> dict:
    """The batch as each accepted kind; the float one strided (a permuted view), as decoders give it."""
    return {"float": torch.from_numpy(data).permute(0, 1, 4, 2, 3).float() / 255,
            "uint8": torch.from_numpy(data.copy()), "numpy": data.copy()}


def shares(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.shares_memory(a, b)
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def same(a, b) -> bool:
    return np.array_equal(a, b) if isinstance(a, np.ndarray) else torch.equal(a, b)


@pytest.mark.parametrize("op", ["contrast", "jumble", "rotate", "gaussian_noise"])
@pytest.mark.parametrize("kind", ["float", "uint8", "numpy"])
def test_one_op_for_every_sample_equals_apply_in_memory_of_its_own(op: str, kind: str, data: np.ndarray) -> None:
    x = kinds(data)[kind]
    before = x.clone() if kind != "numpy" else x.copy()
    t = RandomPerturbation(op, severity=3, seed=1)
    keys = list(range(len(x)))
    out = t(x, keys=keys)
    assert type(out) is type(x) and out.shape == x.shape and out.dtype == x.dtype
    assert not shares(out, x)
    for i, p in enumerate(t.params(keys)):
        assert p["op"] == op
        assert same(out[i], apply(x[i], op, 3, seed=p["seed"]))
        one = t(x[i], keys=i)                                 # a single clip takes the same route
        assert same(one, out[i]) and not shares(one, x)
    assert not same(out, x)
    out[:] = 0                                                 # the output is the caller's to write
    assert same(x, before)


@pytest.mark.parametrize("kind", ["float", "uint8", "numpy"])
def test_samples_left_as_they_are_come_back_as_copies(kind: str, data: np.ndarray) -> None:
    x = kinds(data)[kind]
    t = RandomPerturbation("contrast", severity=3, p=0.5, seed=0)
    keys = list(range(len(x)))
    params = t.params(keys)
    assert 0 < sum(p is None for p in params) < len(x)       # some samples left, the others one group
    out = t(x, keys=keys)
    assert not shares(out, x)
    for i, p in enumerate(params):
        want = x[i] if p is None else apply(x[i], "contrast", 3, seed=p["seed"])
        assert same(out[i], want)


@pytest.mark.parametrize("ops,p", [("contrast", 1.0), ("gaussian_noise", 1.0), (MIXED, 1.0), (MIXED, 0.5)])
def test_a_float_batch_is_range_checked_once_per_call(ops: str, p: float, data: np.ndarray,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    x = kinds(data)["float"]
    t = RandomPerturbation(ops, severity=(1, 5), p=p, seed=2)
    keys = list(range(len(x)))
    want = [t(x, keys=keys), t(x), t(x[0], keys=0)]          # before counting: the same outputs after
    calls = []
    real = torch.aminmax

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "aminmax", counted)
    for got, call in zip(want, [lambda: t(x, keys=keys), lambda: t(x), lambda: t(x[0], keys=0)]):
        calls.clear()
        assert torch.equal(call(), got)
        assert len(calls) == 1
    if ops == MIXED and p == 1.0:
        assert len({q["op"] for q in t.params(keys)}) > 1       # several groups, still one check
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        t(x * 2, keys=keys)                                     # and the one check still refuses
