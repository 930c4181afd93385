"""The recorded recipe fidelity (benchmarks/recipe_fidelity.py --record): every file of
``perturb build --recipe imagenet-c`` on real photos against make_imagenet_c.py's pipeline run with
imagecorruptions 1.1.2 and Pillow, for the recipe the package ships."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.recipe_fidelity import DETERMINISTIC, FLOOR, PHOTOS, SEVERITIES, UNGATED  # noqa: E402
from perturb.image import RECIPES  # noqa: E402
from perturb.image.recipes import CROP, RESIZE  # noqa: E402

RECORD = json.loads((Path(__file__).parent / "data" / "recipe_fidelity.json").read_text())


def test_the_recorded_minimum_is_at_least_40_db():
    gated = [v for op, row in RECORD["psnr_min"].items() if op not in RECORD["ungated"] for v in row.values()]
    assert len(gated) == (len(DETERMINISTIC) - len(UNGATED)) * len(SEVERITIES) == 35
    assert RECORD["min_psnr"] == min(min(gated), *RECORD["clean_psnr"].values())
    assert RECORD["min_psnr"] >= FLOOR == 40.0


def test_the_record_covers_every_photo_op_and_severity():
    assert RECORD["photos"] == PHOTOS and RECORD["ops"] == DETERMINISTIC and RECORD["ungated"] == UNGATED
    assert {op: sorted(row) for op, row in RECORD["psnr_min"].items()} == \
        {op: [str(s) for s in SEVERITIES] for op in DETERMINISTIC}
    assert sorted(RECORD["clean_psnr"]) == sorted(PHOTOS)
    assert RECORD["peer"].startswith("imagecorruptions 1.1.2, Pillow ")


def test_the_recorded_recipe_is_the_one_shipped():
    recipe = RECIPES["imagenet-c"]
    assert RECORD["recipe"] == {"name": recipe.name, "source": recipe.source, "format": recipe.format,
                                "options": dict(recipe.options), "resize": RESIZE, "crop": CROP}
    assert (RECORD["recipe"]["options"], RESIZE, CROP) == ({"quality": 85, "optimize": True}, 256, 224)
