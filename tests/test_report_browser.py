"""report.html in headless Chromium: one self-contained file whose first screen is the headline."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from perturb.bench.reporting.report import html_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make test adds it)")
HEADLINE_RGB = (245, 248, 255)          # the headline box's background (#f5f8ff in report.CSS)
SCREEN = (1280, 900)


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    from perturb.bench.api import benchmark
    from perturb.bench.options import BenchOptions
    from perturb.bench.pipeline.data import make_data
    from bench_fixtures import tiny_items
    from perturb.bench.pipeline.encoder import Settings

    data = make_data(tiny_items(6, frames=6, size=32), "tiny", "memory")
    return benchmark("toy:16", data, BenchOptions(bootstrap=50, settings=Settings(progress=False)),
                     video=["gaussian_noise", "jpeg"], text=["Typos"], severities=(1, 3, 5))


def screenshot(html: str, tmp_path: Path) -> np.ndarray:
    """The first screen of ``html`` as rendered by headless Chromium, as an RGB array."""
    import cv2

    page, png = tmp_path / "report.html", tmp_path / "shot.png"
    page.write_text(html, encoding="utf-8")
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={SCREEN[0]},{SCREEN[1]}",
                    f"--screenshot={png}", page.as_uri()], check=True, capture_output=True, timeout=120)
    return cv2.cvtColor(cv2.imread(str(png)), cv2.COLOR_BGR2RGB)


def headline_rows(image: np.ndarray) -> np.ndarray:
    """Rows of the screen where the headline box's background fills at least a third of the width."""
    box = np.all(image == HEADLINE_RGB, axis=2)
    return np.flatnonzero(box.sum(axis=1) > image.shape[1] / 3)


def test_first_screen_shows_the_headline_before_any_figure(doc, tmp_path):
    html = html_report([doc])
    assert not re.search(r"""(src|href)=["'](?!data:)""", html)        # self-contained: nothing fetched
    image = screenshot(html, tmp_path)
    assert image.shape[:2] == (SCREEN[1], SCREEN[0])
    rows = headline_rows(image)
    assert rows.size > 150                                           # a box of clean score, γ and worst five
    assert rows[0] < SCREEN[1] / 4                                   # near the top of the first screen


def test_a_report_without_the_headline_fails_the_check(doc, tmp_path):
    html = re.sub(r"<section class='headline'.*?</section>", "", html_report([doc]), flags=re.S)
    assert headline_rows(screenshot(html, tmp_path)).size == 0
