"""Sparse-kernel correlation: the grouped direct filter equals one dense filter2D call."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from perturb.video.kernels.sparse_filter import DIRECT_AREA, correlate, dense_taps, sparse_kernel
from perturb.video.kernels.blur import (column_prefix, defocus_blur, disk_columns, disk_kernel, disk_mask,
                                motion_kernel, render_motion_blur)
from perturb.video.sample import sample_clip
from perturb.video.severity_params import table


def test_groups_stay_under_the_dft_threshold_and_keep_every_tap() -> None:
    rng = np.random.default_rng(0)
    kernel = np.where(rng.random((29, 29)) < 0.1, rng.random((29, 29)), 0).astype(np.float32)
    sparse = sparse_kernel(dense_taps(kernel, (14, 14)))
    assert len(sparse.groups) > 1
    assert all(k.size <= DIRECT_AREA for k, _, _ in sparse.groups)
    assert sum(int(np.count_nonzero(k)) for k, _, _ in sparse.groups) == np.count_nonzero(kernel)
    ys, xs = np.nonzero(kernel)
    assert sparse.reach == (14 - ys.min(), ys.max() - 14, 14 - xs.min(), xs.max() - 14)


@pytest.mark.parametrize("anchor", [(0, 0), (14, 14), (3, 20)])
def test_correlate_equals_dense_filter2d(anchor: tuple[int, int]) -> None:
    rng = np.random.default_rng(1)
    kernel = np.where(rng.random((21, 29)) < 0.08, rng.random((21, 29)), 0).astype(np.float32)
    image = rng.random((40, 50, 3)).astype(np.float32)
    sparse = sparse_kernel(dense_taps(kernel, anchor))
    top, bottom, left, right = sparse.reach
    padded = cv2.copyMakeBorder(image, top, bottom, left, right, cv2.BORDER_REPLICATE)
    ours = correlate(padded, sparse, (top, left), (40, 50))
    dense = cv2.filter2D(image, -1, kernel, anchor=anchor, borderType=cv2.BORDER_REPLICATE)
    assert ours.shape == image.shape
    np.testing.assert_allclose(ours, dense, atol=1e-4)


def test_correlate_refuses_a_source_without_enough_padding() -> None:
    sparse = sparse_kernel([(0, 0, 1.0), (3, 3, 1.0)])
    with pytest.raises(ValueError, match="not padded enough"):
        correlate(np.zeros((10, 10), np.float32), sparse, (0, 0), (10, 10))
    with pytest.raises(ValueError, match="at least one tap"):
        sparse_kernel([])


@pytest.mark.parametrize("radius", [3, 4, 6, 8, 10, 2.5])
def test_disk_columns_sum_to_the_disk(radius: float) -> None:
    """Two taps per column over a column prefix sum count exactly the disk's pixels."""
    mask = disk_mask(radius)
    half = len(mask) // 2
    image = np.zeros((2 * half + 1, 2 * half + 1), np.float32)
    image[half, half] = 1                                  # an impulse: the output is the mask
    padded = np.pad(image, half)
    prefix = np.vstack([np.zeros((1, padded.shape[1]), np.float32), np.cumsum(padded, axis=0)])
    out = correlate(prefix, disk_columns(radius), (half, half), image.shape)
    assert np.array_equal(out, mask[::-1, ::-1].astype(np.float32))


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("shape", [(4, 224, 224, 3), (2, 9, 13, 3)])
def test_defocus_equals_the_dense_disk_kernel(severity: int, shape: tuple[int, ...]) -> None:
    params = table("defocus_blur")[severity]
    clip = np.random.default_rng(severity).integers(0, 256, shape, dtype=np.uint8)
    if shape[1] == 224:
        clip = np.ascontiguousarray(sample_clip(shape[0]))
    kernel = disk_kernel(**params)
    dense = np.stack([cv2.filter2D(f, -1, kernel, borderType=cv2.BORDER_REFLECT_101) for f in clip])
    diff = np.abs(defocus_blur(clip, **params).astype(int) - dense)
    assert diff.max() <= 1 and diff.mean() < 1e-3


def test_disk_kernel_is_the_disk_convolved_with_the_alias_gaussian() -> None:
    kernel = disk_kernel(10, 0.5)                   # disk radius 10 plus a 5-tap Gaussian
    assert kernel.shape == (25, 25)
    assert abs(float(kernel.sum()) - 1) < 1e-6
    assert np.allclose(kernel, kernel[::-1]) and np.allclose(kernel, kernel.T)


def test_motion_blur_equals_the_dense_streak_kernel() -> None:
    clip = np.ascontiguousarray(sample_clip(6))
    angles = np.array([-45.0, -20.0, 0.0, 13.0, 33.3, 45.0])
    params = table("motion_blur")[5]
    dense = np.stack([cv2.filter2D(f, -1, k, anchor=a, borderType=cv2.BORDER_REPLICATE)
                      for f, (k, a) in zip(clip, (motion_kernel(**params, angle=x) for x in angles))])
    diff = np.abs(render_motion_blur(clip, angles, **params).astype(int) - dense)
    assert diff.max() <= 1 and diff.mean() < 1e-3


def test_column_prefix_is_exact_for_small_and_large_frames() -> None:
    rng = np.random.default_rng(5)
    for shape in [(30, 40, 3), (300, 300, 3)]:                  # float32 and float64 integral
        frame = rng.integers(0, 256, shape, dtype=np.uint8)
        expected = np.vstack([np.zeros((1,) + shape[1:]), np.cumsum(frame, axis=0)])
        prefix = column_prefix(frame)
        assert prefix.dtype == np.float32 and np.array_equal(prefix, expected)
