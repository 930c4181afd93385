"""The model-kinds table: parse_spec, load_model, --frame-sampling and the --model help read one row per kind."""
from __future__ import annotations

import numpy as np
import pytest

from perturb.bench.adapters import factory
from perturb.bench.adapters.kinds import KINDS, Kind, LoadOptions
from perturb.bench.adapters.protocol import Model, ModelSpecError
from perturb.bench.adapters.toy import ToyEncoder


def _load_const(kind: str, target: str, options: LoadOptions) -> Model:
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
    m = factory.load_model("const:3", device="cpu", cache_key="v1")
    assert m.id == "const:3@cpu" and m.cache_key == "v1"
    assert m.encode_texts(["a cat"]).shape == (1, 4)
    with pytest.raises(ModelSpecError, match="applies to hf: and clip: models; 'const:3' picks its own"):
        factory.load_model("const:3", frame_sampling="start")
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
    assert factory.load_model("http://127.0.0.1:9/x", frames=3).id == "http:http://127.0.0.1:9/x@3f"
    m = factory.load_model(f"callable:{__name__}:build_on", device="cpu")
    assert m.id == f"callable:{__name__}:build_on" and build_on.device == "cpu"
    assert [k for k, kind in KINDS.items() if kind.frame_sampling] == ["hf", "clip"]
