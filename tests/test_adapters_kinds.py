"""The model-kinds table: parse_spec, load_model, --frame-sampling and the --model help read one row per kind."""
from __future__ import annotations

import numpy as np
import pytest

from perturb.bench.adapters import factory
from perturb.bench.adapters.model_options import ModelOptions
from perturb.bench.adapters.kinds import KINDS, Kind
from perturb.bench.adapters.protocol import Model, ModelSpecError
from perturb.bench.adapters.toy import ToyEncoder


def _load_const(kind: str, target: str, options: ModelOptions) -> Model:
    return Model(ToyEncoder(int(target) + 1), f"{kind}:{target}@{options.device}")


def _check_const(kind: str, target: str) -> None:
    if not target.isdigit():
        raise ModelSpecError(f"const:N takes digits; got {kind}:{target}")


@pytest.fixture
def with_const(monkeypatch):
    """A new kind added as one row: nothing else is edited."""
    monkeypatch.setitem(KINDS, "const", Kind("const:N", _load_const, _check_const))


def test_a_new_kind_is_one_row_read_by_parse_load_and_help(with_const):
    from perturb.cli import build_parser

    assert factory.parse_spec("const:3") == ("const", "3")
    with pytest.raises(ModelSpecError, match="const:N takes digits; got const:x"):
        factory.parse_spec("const:x")
    with pytest.raises(ModelSpecError, match=r"unknown model kind 'nope' .*toy:DIM, const:N$"):
        factory.parse_spec("nope:1")
    m = factory.load_model("const:3", ModelOptions(device="cpu", cache_key="v1"))
    assert m.id == "const:3@cpu" and m.cache_key == "v1"
    assert m.encode_texts(["a cat"]).shape == (1, 4)
    with pytest.raises(ModelSpecError, match="applies to hf: and clip: models; 'const:3' picks its own"):
        factory.load_model("const:3", ModelOptions(frame_sampling="start"))
    factory.check_available("const:3")                  # no early check of its own: nothing to refuse
    bench = next(a for a in build_parser()._actions if a.dest == "command").choices["bench"]
    help_text = next(a.help for a in bench._actions if a.dest == "model")
    assert "| toy:DIM | const:N (" in help_text


def build_on(device: str = "auto") -> ToyEncoder:
    """A ``callable:`` factory taking the device its model goes on."""
    build_on.device = device
    return ToyEncoder(4)


def test_each_kind_loads_through_its_row():
    assert factory.load_model("toy:8").id == "toy:8"
    assert factory.load_model("http://127.0.0.1:9/x", ModelOptions(frames=3)).id == "http:http://127.0.0.1:9/x@3f"
    m = factory.load_model(f"callable:{__name__}:build_on", ModelOptions(device="cpu"))
    assert m.id == f"callable:{__name__}:build_on" and build_on.device == "cpu"


# one spec of every built-in kind (the last test checks that none is missing)
ONE_SPEC_EACH = ("toy:8", "clip:x", "precomputed:/tmp", "http://h:1/x", "hf:a/b", f"callable:{__name__}:build_on")


def test_frame_sampling_is_taken_by_exactly_the_kinds_whose_row_says_so():
    takers = " and ".join(f"{k}:" for k, kind in KINDS.items() if kind.frame_sampling)
    for spec in ONE_SPEC_EACH:
        if KINDS[factory.parse_spec(spec)[0]].frame_sampling:
            factory.check_frame_sampling(spec, "start")
        else:
            with pytest.raises(ModelSpecError, match=f"applies to {takers} models; '{spec}' picks its own"):
                factory.check_frame_sampling(spec, "start")


def test_several_gpus_place_replicas_for_exactly_the_kinds_built_for_the_device(monkeypatch):
    from perturb.bench.distributed import placement

    monkeypatch.setattr(placement, "device_count", lambda: 4)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    for spec in ONE_SPEC_EACH:
        kind = factory.parse_spec(spec)[0]
        engine, why = placement.default_engine(kind, "cuda", None)
        assert (engine == "loky") == KINDS[kind].on_device, (spec, why)
    assert {factory.parse_spec(spec)[0] for spec in ONE_SPEC_EACH} == set(KINDS)


def pair_scores(clips, texts):
    """A ``callable:`` cross-encoder: a function of (clips, texts)."""
    return np.zeros((len(texts), len(clips)))


def _ends_in_9_is_cross(target: str, may_import: bool) -> str | None:
    return "cross" if target.endswith("9") else "dual"


def test_a_new_kinds_placement_and_encoder_are_read_off_its_row(with_const, monkeypatch):
    from perturb.bench.distributed import placement
    from perturb.bench.adapters.factory import encoder_type

    monkeypatch.setattr(placement, "device_count", lambda: 4)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert placement.default_engine("const", "cuda", None) == (
        None, "a const: model is not placed on --device: this process")
    assert encoder_type("const:3") is None and encoder_type("const:3", may_import=True) is None   # decided once built
    monkeypatch.setitem(KINDS, "const", Kind("const:N", _load_const, _check_const, on_device=True,
                                             encoder=_ends_in_9_is_cross))
    assert placement.default_engine("const", "cuda", None)[0] == "loky"
    assert encoder_type("const:3") == encoder_type("const:3", may_import=True) == "dual"
    assert encoder_type("const:9") == encoder_type("const:9", may_import=True) == "cross"


def test_built_in_rows_say_where_each_model_goes_and_what_its_spec_tells():
    from perturb.bench.adapters.factory import encoder_type

    told = {"toy:8": "dual", "clip:x": "dual", "precomputed:/tmp": "dual", "http://h:1/x": "dual",
            "https://h/x#cross": "cross", "http:http://h/x#cross": "cross", "hf:a/b": None, "hf:a/b#embed": "dual",
            "hf:a/b@rev#itm": "cross", "callable:perturb.bench.adapters.toy:ToyEncoder": "dual",
            f"callable:{__name__}:pair_scores": "cross", f"callable:{__name__}:build_on": None}
    assert {spec: encoder_type(spec, may_import=True) for spec in told} == told
    # without importing anything, a callable is not known to be dual
    assert [spec for spec in told if encoder_type(spec) == "dual"] == \
        [s for s, k in told.items() if k == "dual" and "callable" not in s]
