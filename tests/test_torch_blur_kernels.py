"""The torch blur kernels against plain references: values, on frames of any size."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from perturb.video.kernels import imagenet_c as ic  # noqa: E402
from perturb.video.kernels import torch_imagenet_c as tic  # noqa: E402
from perturb.video.kernels import torch_blur_camera as tbc  # noqa: E402
from perturb.video.kernels.blur import disk_kernel  # noqa: E402

# CPU tensors render with the torch kernels here, as on a GPU (the code these tests check).
pytestmark = pytest.mark.usefixtures("torch_kernels_on_cpu")


def _correlate_replicated(x: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """Plain reference: a 1-D correlation with replicated edges along columns then rows (float64)."""
    r = len(taps) // 2
    h, w = x.shape[-2:]
    cols = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(r, r)], mode="edge")
    y = sum(t * cols[..., k:k + w] for k, t in enumerate(taps))
    rows = np.pad(y, [(0, 0)] * (x.ndim - 2) + [(r, r), (0, 0)], mode="edge")
    return sum(t * rows[..., k:k + h, :] for k, t in enumerate(taps))


@pytest.mark.parametrize("shape, sigma", [((2, 3, 70, 45), 1), ((1, 3, 64, 97), 3),
                                          ((2, 1, 33, 40), 6), ((1, 3, 5, 7), 6), ((1, 2, 1, 1), 2)])
def test_blocked_separable_equals_a_plain_replicated_correlation(shape, sigma) -> None:
    x = np.random.default_rng(sigma).integers(0, 256, shape).astype(np.float64)
    taps = ic.gaussian_taps(sigma)
    got = tic._separable(torch.from_numpy(x.astype(np.float32)), taps).numpy()
    assert got.shape == shape
    np.testing.assert_allclose(got, _correlate_replicated(x, taps), rtol=0, atol=2e-3)


def test_blocked_separable_keeps_a_step_edge_and_a_flat_frame() -> None:
    x = torch.zeros(1, 1, 40, 80)
    x[..., 40:] = 255.0                                       # a vertical step across a block boundary
    out = tic._separable(x, ic.gaussian_taps(2))
    assert torch.equal(out[..., :30], torch.zeros(1, 1, 40, 30))
    assert torch.allclose(out[..., 50:], torch.full((1, 1, 40, 30), 255.0))
    assert (out[0, 0, :, 39] < 127.5).all() and (out[0, 0, :, 40] > 127.5).all()
    flat = tic._separable(torch.full((1, 3, 37, 70), 91.0), ic.gaussian_taps(6))
    assert torch.allclose(flat, torch.full_like(flat, 91.0), atol=1e-3)


def test_normal_weights_zero_only_the_subnormal_weights() -> None:
    k = np.array([[1e-39, 0.25], [-1e-40, 2e-38]], np.float32)
    assert np.array_equal(tbc.normal_weights(k), np.array([[0, 0.25], [0, 2e-38]], np.float32))
    assert tbc.normal_weights(k).dtype == np.float32


@pytest.mark.parametrize("radius, alias_blur", [(3, 0.1), (4, 0.5)])
def test_defocus_blur_equals_a_plain_reflect101_correlation(radius, alias_blur) -> None:
    x = np.random.default_rng(radius).integers(0, 256, (2, 3, 23, 31)).astype(np.float64)
    kernel = disk_kernel(radius, alias_blur).astype(np.float64)
    assert (np.abs(kernel[kernel != 0]) < np.finfo(np.float32).tiny).any() == (alias_blur == 0.1)
    p = len(kernel) // 2
    pad = np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)], mode="reflect")          # numpy's reflect is reflect-101
    want = sum(kernel[i, j] * pad[..., i:i + 23, j:j + 31] for i in range(len(kernel)) for j in range(len(kernel)))
    got = tbc.defocus_blur(torch.from_numpy(x.astype(np.float32)), None, None,
                           {"radius": radius, "alias_blur": alias_blur}).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-3)
