"""No contrast generator crashes on the 1,000 varied captions, and every output is a valid edit."""
from __future__ import annotations

import pytest

from perturb.contrast import TYPES, generate_batch, lexicon

captions_mod = pytest.importorskip("perturb.testing.captions")


@pytest.fixture(scope="module")
def captions() -> list[str]:
    return captions_mod.varied_captions(1000, seed=0)


@pytest.fixture(scope="module")
def freq(captions) -> lexicon.Frequencies:
    return lexicon.Frequencies.from_captions(captions)


@pytest.mark.parametrize("type", TYPES)
def test_generator_never_crashes_on_varied_captions(type, captions, freq):
    ctx = {"names": captions} if type == "person_id" else {"frequencies": freq}
    found = generate_batch(captions, type, seed=0, n=1, **ctx)
    assert len(found) == len(captions)
    for src, out in zip(captions, found):
        for c in out:
            s = c.span
            assert c.source == src and c.text != src
            assert src[s.start:s.end] == s.original
            assert src[:s.start] + s.replacement + src[s.end:] == c.text
    if type in ("verb", "action", "gender", "object", "hallucination"):
        assert sum(bool(f) for f in found) > 300
