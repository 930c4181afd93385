"""perturb.transforms.RandomPerturbation: a sample's output depends on (seed, epoch, key) only and
equals perturb.video.apply with its recorded params, in any batch, layout and worker count."""
from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.transforms import RandomPerturbation  # noqa: E402
from perturb.transforms.batch import fused  # noqa: E402
from perturb.video import apply, draw  # noqa: E402
from perturb.video.sample import sample_clip  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
MIXED = "rotate,translate,jumble,freeze,gaussian_noise,defocus_blur,brightness,jpeg,fog,temporal_blur"
N_CLIPS = 8


def clips(n: int = N_CLIPS) -> np.ndarray:
    """n distinct 4-frame 24x32 clips of real content (crops of the sample clip)."""
    src = sample_clip(4 + n)
    return np.stack([np.ascontiguousarray(src[i:i + 4, 40 + 9 * i:64 + 9 * i, 60:92]) for i in range(n)])


def as_float(batch: np.ndarray):
    """(B, T, H, W, 3) uint8 -> torch float (B, T, 3, H, W) in [0, 1]."""
    return torch.from_numpy(batch).permute(0, 1, 4, 2, 3).float() / 255


def to_levels(out) -> np.ndarray:
    """Any output back to uint8 (B, T, H, W, 3) levels, for comparison across layouts."""
    if isinstance(out, np.ndarray):
        return out
    if out.dtype == torch.uint8:
        return out.numpy()
    return (out * 255).round().to(torch.uint8).permute(0, 1, 3, 4, 2).numpy()


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return clips()


def test_key_gives_the_same_output_in_any_batch_and_position(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, severity=(1, 5), seed=3)
    keys = [f"video{i}" for i in range(N_CLIPS)]
    whole = t(torch.from_numpy(data), keys=keys).numpy()
    order = [5, 0, 7, 2]                                    # another composition, other positions
    part = t(torch.from_numpy(data[order]), keys=[keys[i] for i in order]).numpy()
    for j, i in enumerate(order):
        assert np.array_equal(part[j], whole[i])
    one = t(torch.from_numpy(data[6]), keys=keys[6]).numpy()   # a single clip (T, H, W, C)
    assert np.array_equal(one, whole[6])
    ints = t(torch.from_numpy(data[:2]), keys=[0, 1])
    assert torch.equal(t(torch.from_numpy(data[1]), keys=torch.tensor(1)), ints[1])
    assert torch.equal(t(torch.from_numpy(data[1]), keys=np.int64(1)), ints[1])
    assert sum(not np.array_equal(whole[i], data[i]) for i in range(N_CLIPS)) >= N_CLIPS - 1


def test_layouts_give_the_same_levels(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=4)
    keys = list(range(N_CLIPS))
    u8 = t(torch.from_numpy(data), keys=keys)
    fl = t(as_float(data), keys=keys)
    nd = t(data, keys=keys)
    assert u8.dtype == torch.uint8 and fl.dtype == torch.float32 and isinstance(nd, np.ndarray)
    assert fl.shape == as_float(data).shape and nd.shape == data.shape
    assert np.array_equal(to_levels(fl), u8.numpy())            # the same torch kernels
    gap = np.abs(nd.astype(np.int16) - u8.numpy().astype(np.int16))  # numpy kernels: the documented tolerance
    assert gap.max() <= 1 and (gap > 0).mean() < 0.01


def test_each_sample_equals_apply_with_its_recorded_params(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, severity={2: 1, 5: 1}, seed=5)
    keys = list(range(100, 100 + N_CLIPS))
    fl_in = as_float(data)
    u8, fl, nd = t(torch.from_numpy(data), keys=keys), t(fl_in, keys=keys), t(data, keys=keys)
    params = t.params(keys)
    assert all(p is not None and p["severity"] in (2, 5) for p in params)
    for i, p in enumerate(params):
        args = (p["op"], p["severity"])
        assert torch.equal(u8[i], apply(torch.from_numpy(data[i]), *args, seed=p["seed"]))
        assert torch.equal(fl[i], apply(fl_in[i], *args, seed=p["seed"]))
        assert np.array_equal(nd[i], apply(data[i], *args, seed=p["seed"]))


@pytest.mark.parametrize("op", ["rotate", "translate", "motion_blur", "jumble", "defocus_blur", "saturate",
                                "jpeg", "gaussian_noise", "elastic_transform", "snow", "mpeg1"])
@pytest.mark.parametrize("device", DEVICES)
def test_a_group_of_one_op_renders_as_apply(op: str, device: str, data: np.ndarray) -> None:
    """Samples that drew the same op render together (one kernel call where the draws are per
    frame); each equals apply() on the same device all the same."""
    t = RandomPerturbation(op, severity=4, seed=6)
    keys = list(range(4))
    x = as_float(data[:4]).to(device)
    out = t(x, keys=keys)
    params = t.params(keys)
    assert out.device == x.device
    for i, p in enumerate(params):
        assert torch.equal(out[i], apply(x[i], op, 4, seed=p["seed"]))
    together = fused([draw(op, 4, 4, seed=p["seed"]) for p in params])
    per_frame = op in ("rotate", "translate", "motion_blur", "jumble", "defocus_blur", "saturate", "jpeg")
    assert (together is not None) == per_frame


def test_set_epoch_changes_draws_and_an_epoch_repeats() -> None:
    t = RandomPerturbation("suite:imagenet-c", severity=(1, 5), seed=0)
    keys = list(range(50))
    first = t.params(keys)
    t.set_epoch(1)
    second = t.params(keys)
    assert sum(a != b for a, b in zip(first, second)) >= 45
    t.set_epoch(0)
    assert t.params(keys) == first
    assert RandomPerturbation("suite:imagenet-c", severity=(1, 5), seed=1).params(keys) != first


def test_p_zero_is_the_identity_and_p_only_adds_samples(data: np.ndarray) -> None:
    keys = list(range(N_CLIPS))
    x = torch.from_numpy(data)
    none = RandomPerturbation(MIXED, p=0.0, seed=2)
    out = none(x, keys=keys)
    assert torch.equal(out, x) and out.data_ptr() != x.data_ptr()
    assert none.params(keys) == [None] * N_CLIPS
    keys = list(range(400))
    half = RandomPerturbation(MIXED, p=0.5, seed=2).params(keys)
    every = RandomPerturbation(MIXED, p=1.0, seed=2).params(keys)
    assert 150 < sum(p is not None for p in half) < 250
    assert all(h is None or h == e for h, e in zip(half, every))


def test_weights_and_severity_weights_steer_the_draw() -> None:
    keys = list(range(300))
    t = RandomPerturbation("rotate,jpeg,freeze", weights=[0, 1, 3], severity=[0, 0, 1, 0, 1], seed=0)
    params = t.params(keys)
    ops = [p["op"] for p in params]
    assert set(ops) == {"jpeg", "freeze"} and 180 < ops.count("freeze") < 270
    assert {p["severity"] for p in params} == {3, 5}
    named = RandomPerturbation("rotate,jpeg,freeze", weights={"freeze": 3, "jpeg": 1, "rotate": 0},
                               severity=[0, 0, 1, 0, 1], seed=0)
    assert named.params(keys) == params
    assert RandomPerturbation("contrast:kinetics-c", severity=2).params([0])[0]["op"] == "contrast:kinetics-c"


OVERFLOWING = [
    (dict(ops="jpeg,rotate", weights=[1e308, 1e308]), "op weights must be finite numbers >= 0 (not bools) "
     "whose sum is finite and > 0; got [1e+308, 1e+308], whose sum is inf"),
    (dict(ops="jpeg,rotate", weights=np.array([1e308, 1e308])), "op weights must be finite numbers >= 0 "
     "(not bools) whose sum is finite and > 0; got [1e+308, 1e+308], whose sum is inf"),
    (dict(ops="jpeg,rotate", weights=[10**400, 1]), "op weights must be finite numbers >= 0 (not bools) "
     f"whose sum is finite and > 0; got [{10**400}, 1]"),
    (dict(ops="jpeg", severity=[1e308] * 5), "severity weights must be finite numbers >= 0 (not bools) "
     "whose sum is finite and > 0; got [1e+308, 1e+308, 1e+308, 1e+308, 1e+308], whose sum is inf"),
    (dict(ops="jpeg", severity={4: 1e308, 5: 1e308}), "severity weights must be finite numbers >= 0 "
     "(not bools) whose sum is finite and > 0; got [1e+308, 1e+308], whose sum is inf"),
    (dict(ops="jpeg,rotate", weights=[0, 0.0]), "op weights must be finite numbers >= 0 (not bools) "
     "whose sum is finite and > 0; got [0, 0.0], whose sum is 0"),
]


@pytest.mark.parametrize("kwargs,says", OVERFLOWING, ids=["1e308", "1e308-array", "10**400", "severity-1e308",
                                                          "severity-mapping-1e308", "zeros"])
def test_weights_whose_sum_overflows_are_refused(kwargs: dict, says: str) -> None:
    """A sum that overflows to inf made every probability 0, so the last op or level was always
    drawn: refused, saying what was expected; large weights whose sum is finite still draw fairly."""
    with pytest.raises(ValueError) as err:
        RandomPerturbation(**kwargs)
    assert str(err.value) == says
    ops = [d["op"] for d in RandomPerturbation("jpeg,rotate", weights=[8e307, 8e307]).params(range(400))]
    assert 150 < ops.count("jpeg") < 250
    levels = [d["severity"] for d in RandomPerturbation("jpeg", severity=[3e307] * 5).params(range(500))]
    assert set(levels) == {1, 2, 3, 4, 5}


NOT_WEIGHTS = [
    ([True, False], "got [True, False]"),
    (np.array([True, True]), "got [True, True]"),
    ([[1, 2], [3, 4]], "got [[1, 2], [3, 4]]"),
    (np.ones((2, 2)), "got [[1.0, 1.0], [1.0, 1.0]]"),
    (["1", 2], "got ['1', 2]"),
]


@pytest.mark.parametrize("weights,says", NOT_WEIGHTS, ids=[s for _, s in NOT_WEIGHTS])
def test_bool_and_nested_weights_are_refused_naming_the_input(weights, says: str) -> None:
    with pytest.raises(ValueError) as err:
        RandomPerturbation("jpeg,rotate", weights=weights)
    assert str(err.value) == ("op weights must be finite numbers >= 0 (not bools) whose sum is finite "
                              f"and > 0; {says}")
    with pytest.raises(ValueError) as err:
        RandomPerturbation("jpeg", severity=[weights[0]] * 4 + [weights[1]])
    assert str(err.value).startswith("severity weights must be finite numbers >= 0") and "nan" not in str(err.value)


def test_severity_levels_are_ints_as_keys_too() -> None:
    """{1.0: 1} is refused as severity=3.0 is (levels are ints); numpy int levels are ints."""
    for bad in ({1.0: 1}, {3.0: 1, 4: 1}, {True: 1}, {np.float64(2): 1}):
        with pytest.raises(ValueError, match="severity must be an int in 1..5, a \\(low, high\\) pair"):
            RandomPerturbation("jpeg", severity=bad)
    with pytest.raises(ValueError, match="severity must be an int in 1..5"):
        RandomPerturbation("jpeg", severity=3.0)
    keys = list(range(50))
    assert RandomPerturbation("jpeg", severity={np.int64(2): 1, 4: 1}).params(keys) == \
        RandomPerturbation("jpeg", severity={2: 1, 4: 1}).params(keys)


UNORDERED_KEYS = [
    ({3, 1, 2}, "got set"),
    (frozenset({3, 1, 2}), "got frozenset"),
    ({1: "a", 2: "b", 3: "c"}, "got dict"),
    ((k for k in (1, 2, 3)), "got generator"),
    (iter([1, 2, 3]), "got list_iterator"),
    ({1: 0, 2: 0, 3: 0}.keys(), "got dict_keys"),
]


@pytest.mark.parametrize("keys,says", UNORDERED_KEYS, ids=[s for _, s in UNORDERED_KEYS])
def test_keys_without_an_order_or_one_shot_are_refused(keys, says: str, data: np.ndarray) -> None:
    """The i-th key is the i-th sample's: a set has no order and a generator is read once."""
    t = RandomPerturbation("rotate", seed=0)
    for call in (lambda: t.params(keys), lambda: t(data[:3], keys=keys)):
        with pytest.raises(ValueError) as err:
            call()
        assert str(err.value) == ("keys must be a list, tuple or range, or a 1-D numpy array or torch "
                                  f"tensor, one key per sample in order, each an int or a str (a sample "
                                  f"id, a path); {says}")
    assert t.params((1, 2, 3)) == t.params(range(1, 4)) == t.params([1, 2, 3])


def test_a_key_with_a_lone_surrogate_is_a_value_error() -> None:
    t = RandomPerturbation("rotate", seed=0)
    for call in (lambda: t.params(["a", "b\ud800c"]), lambda: t(np.zeros((4, 8, 8, 3), np.uint8), keys="\udfff")):
        with pytest.raises(ValueError, match="a sample key '.*' is not valid Unicode text: "
                                             "surrogates not allowed at position"):
            call()


def test_keys_ints_of_any_kind_agree_and_strs_differ() -> None:
    t = RandomPerturbation("suite:msrvtt-p", seed=9)
    ints = t.params([3, 7, -2])
    assert t.params(np.array([3, 7, -2])) == ints == t.params(torch.tensor([3, 7, -2]))
    assert t.params(["3", "7", "-2"]) != ints
    assert t.params([2])[0] != t.params([-2])[0]


def test_without_keys_a_sample_is_keyed_by_its_content(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=1)
    x = torch.from_numpy(data)
    keys = t.content_keys(x)
    assert keys == t.content_keys(as_float(data)) == t.content_keys(data)
    assert len(set(keys)) == N_CLIPS
    assert torch.equal(t(x), t(x, keys=keys))
    assert torch.equal(t(x[[4, 1]]), t(x)[[4, 1]])


def test_no_global_rng_is_read_or_advanced(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=0)
    np_state, torch_state = np.random.get_state()[1].copy(), torch.get_rng_state().clone()
    a = t(torch.from_numpy(data), keys=list(range(N_CLIPS)))
    assert np.array_equal(np.random.get_state()[1], np_state) and torch.equal(torch.get_rng_state(), torch_state)
    np.random.seed(123)
    torch.manual_seed(123)
    assert torch.equal(t(torch.from_numpy(data), keys=list(range(N_CLIPS))), a)


def test_pickles_and_sits_in_sequential_and_compose(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=7)
    t.set_epoch(3)
    x = torch.from_numpy(data[:3])
    copy = pickle.loads(pickle.dumps(t))
    assert copy.epoch == 3 and torch.equal(copy(x, keys=[0, 1, 2]), t(x, keys=[0, 1, 2]))
    assert isinstance(t, torch.nn.Module) and list(t.parameters()) == []
    assert torch.equal(torch.nn.Sequential(t)(x), t(x))
    compose = [t, lambda clip: clip]                          # torchvision's Compose calls each in turn
    y = x
    for step in compose:
        y = step(y)
    assert torch.equal(y, t(x))
    assert "RandomPerturbation(10 ops" in repr(t) and "epoch=3" in repr(t)


def dump_if_stuck(_: int) -> None:
    """A worker that hangs prints where and exits (the loader's timeout then fails the test)."""
    import faulthandler
    faulthandler.dump_traceback_later(50, exit=True)


class Clips(torch.utils.data.Dataset):
    """Clips corrupted in the loader's workers, keyed by index, with whether CUDA was initialised there."""

    def __init__(self, data: np.ndarray, transform: RandomPerturbation) -> None:
        self.data, self.transform = data, transform

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int):
        out = self.transform(torch.from_numpy(self.data[i]), keys=i)
        return out, torch.cuda.is_initialized()


def test_same_outputs_for_any_num_workers_and_on_the_batch(data: np.ndarray) -> None:
    t = RandomPerturbation(MIXED, seed=11)
    t.set_epoch(2)
    runs = []
    for workers in (0, 2):
        guard = {"worker_init_fn": dump_if_stuck, "timeout": 60} if workers else {}
        loader = torch.utils.data.DataLoader(Clips(data, t), batch_size=3, num_workers=workers, **guard)
        batches = list(loader)
        runs.append(torch.cat([x for x, _ in batches]))
        assert not any(cuda.any() for _, cuda in batches)          # no CUDA in a worker
    assert torch.equal(runs[0], runs[1])
    on_batch = t(torch.from_numpy(data), keys=torch.arange(N_CLIPS))   # keys as collated
    assert torch.equal(runs[0], on_batch)


BAD_SETTINGS = [
    (dict(ops="no_such_op"), "no_such_op"),
    (dict(ops="none"), "select no video"),
    (dict(ops=3), "ops must be"),
    (dict(severity=(0, 3)), "severity range"),
    (dict(severity=(4, 2)), "severity range"),
    (dict(severity=6), "severity must be"),
    (dict(severity="3"), "severity must be"),
    (dict(severity=[1, 2, 3]), "severity must be"),
    (dict(severity=[0, 0, 0, 0, 0]), "severity weights"),
    (dict(ops="rotate,jpeg", weights=[1, 2, 3]), "one weight per op: 2 ops"),
    (dict(ops="rotate,jpeg", weights=[1, -1]), "op weights"),
    (dict(ops="rotate,jpeg", weights={"rotate": 1}), "missing ['jpeg']"),
    (dict(p=1.5), "p must be"),
    (dict(p=True), "p must be"),
    (dict(seed=-1), "seed must be"),
]


@pytest.mark.parametrize("kwargs,says", BAD_SETTINGS, ids=[str(k) for k, _ in BAD_SETTINGS])
def test_bad_settings_get_one_line_errors(kwargs: dict, says: str) -> None:
    with pytest.raises(ValueError, match=None) as err:
        RandomPerturbation(**kwargs)
    assert says in str(err.value) and "\n" not in str(err.value)


BAD_CALLS = [
    (lambda x: x, [1.5, 2, 3], "a sample key must be an int or a str"),
    (lambda x: x, [True, 2, 3], "a sample key must be an int or a str"),
    (lambda x: x, [None, 2, 3], "a sample key must be an int or a str"),
    (lambda x: x, [1, 2], "expected 3 keys"),
    (lambda x: x, "abc", "keys must be a sequence"),
    (lambda x: x[0, 0], [0], "expected a batch"),
    (lambda x: x.numpy().astype(np.float32) / 255, [0, 1, 2], "numpy clips must be uint8"),
    (lambda x: x.to(torch.int32), [0, 1, 2], "expected a clip"),
    (lambda x: x[..., :2], [0, 1, 2], "3 RGB channels"),
    (lambda x: as_float(x.numpy()) * 255, [0, 1, 2], "float values in [0, 1]"),
    (lambda x: x[:0], [], "at least one clip"),
    (lambda x: [1, 2, 3], [0, 1, 2], "expected a batch"),
]


@pytest.mark.parametrize("make,keys,says", BAD_CALLS, ids=[s for _, _, s in BAD_CALLS])
def test_bad_calls_get_one_line_errors(make, keys, says: str, data: np.ndarray) -> None:
    t = RandomPerturbation("rotate", seed=0)
    with pytest.raises(ValueError) as err:
        t(make(torch.from_numpy(data[:3])), keys=keys)
    assert says in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="epoch must be a non-negative int"):
        t.set_epoch(-1)


def test_numpy_batches_need_no_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None\n"
            "import numpy as np, pickle\n"
            "from perturb.transforms import RandomPerturbation, RandomTextPerturbation\n"
            "t = RandomPerturbation('rotate,jumble', seed=0)\n"
            "x = np.zeros((2, 3, 8, 8, 3), np.uint8); x[:, :, 2:5] = 200\n"
            "out = pickle.loads(pickle.dumps(t))(x, keys=[0, 1])\n"
            "print(type(out).__name__, out.shape, RandomTextPerturbation('Typos')('a dog runs', keys=1) != '')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ndarray", "(2,", "3,", "8,", "8,", "3)", "True"]


def test_draws_for_a_fixed_seed_are_pinned() -> None:
    """The (seed, epoch, key) -> draw rule is part of the contract: recorded values, not just self-agreement."""
    t = RandomPerturbation("suite:imagenet-c", severity=(1, 5), p=0.8, seed=5)
    keys = [0, 7, -3, 2**40, "clip-a", "vidéo/ß.mp4"]
    assert t.params(keys) == [
        {"op": "pixelate", "severity": 1, "seed": 3127268762048758940},
        {"op": "speckle_noise:imagenet-c", "severity": 4, "seed": 7316893936934153516},
        None,
        {"op": "snow:imagenet-c", "severity": 3, "seed": 4494357756062053049},
        {"op": "impulse_noise", "severity": 2, "seed": 2388246672797020609},
        {"op": "pixelate", "severity": 2, "seed": 4664260376047112115}]
    t.set_epoch(2)
    assert t.params(keys) == [
        {"op": "brightness", "severity": 2, "seed": 4500397920251646811},
        {"op": "impulse_noise", "severity": 3, "seed": 8767329014736489503},
        {"op": "contrast", "severity": 2, "seed": 7731360446535324993},
        {"op": "contrast", "severity": 1, "seed": 5779591927011529046},
        None, None]
