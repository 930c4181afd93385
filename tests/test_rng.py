"""perturb.rng: the one seed-derivation rule and its refusals of bad seeds."""
from __future__ import annotations

import numpy as np
import pytest

from perturb.rng import as_generator, base_seed, derive_generator, seed_sequence

SAYS = "seed must be None, a non-negative int or a numpy.random.Generator; got "


@pytest.mark.parametrize("bad", [-1, True, 1.5, "3", np.int64(-2)])
def test_bad_seeds_get_the_same_one_line_error_everywhere(bad: object) -> None:
    for call in (as_generator, base_seed, lambda s: derive_generator(s, "key")):
        with pytest.raises(ValueError) as err:
            call(bad)
        assert str(err.value) == SAYS + repr(bad)


def test_base_seed_keeps_ints_and_draws_from_generators() -> None:
    assert base_seed(np.uint32(7)) == 7 and type(base_seed(np.uint32(7))) is int and base_seed(None) is None
    assert base_seed(np.random.default_rng(3)) == base_seed(np.random.default_rng(3))


def test_derive_generator_is_the_seed_sequence_of_its_keys() -> None:
    got = derive_generator(11, 5, "clip", 2**70).integers(0, 2**63, 4)
    want = np.random.Generator(np.random.PCG64(seed_sequence(11, 5, "clip", 2**70))).integers(0, 2**63, 4)
    assert np.array_equal(got, want)
    assert not np.array_equal(derive_generator(11, 5, "clip", 2**70 + 1).integers(0, 2**63, 4), got)
