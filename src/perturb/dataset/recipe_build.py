"""``perturb build --recipe``: a labelled folder built as a suite's source built its set.

``imagenet-c`` (images): ``<out>/<corruption>/<severity>/<class>/<file>`` made by
:data:`perturb.image.RECIPES` ``["imagenet-c"]``, and ``<out>/clean/<class>/<file>``, the same
resize, crop and JPEG save without the corruption. ``kinetics-c`` (videos): Yi et al.'s
``<out>/<corruption>/<severity>/<class>/<video>.<ext>`` under the suite's tables, each video
made as a plain build makes it (:mod:`.video_outputs`). Both resume, lock and seed as
:func:`perturb.dataset.build` does, through the same engines.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..options import options_object, written_input
from ..registry import REGISTRY, Spec
from ..rng import item_seed
from ..selection import parse_severities
from .build_options import BuildOptions
from .builder import OUTPUT_NAMES, BuildConflictError, BuildResult, execute, resolve
from .items import Item, LabelledItem
from .labelled import read_class_folders
from .manifest import Manifest, row_key
from .readers import DatasetFormatError
from .resume import complete
from .work_units import ImageTask, Output, VideoTask

CLEAN = "clean"


@dataclass(frozen=True)
class VideoRecipe:
    """A video suite's set as its source laid it out: the suite, the source's folder names."""

    name: str
    suite: str
    source: str
    folders: Mapping[str, str] = field(default_factory=dict)      # op -> the source's folder name

    def folder(self, name: str) -> str:
        return self.folders.get(name, name)


VIDEO_RECIPES = {"kinetics-c": VideoRecipe(
    "kinetics-c", "kinetics-c", "Yi et al. 2021, Newbeeyoung/Video-Corruption-Robustness create_mini_kinetics_c.py",
    {"temporal_blur": "motion_blur"})}
RECIPE_NAMES = ("imagenet-c", *VIDEO_RECIPES)


def recipe_of(name: str) -> Any:
    """The image :class:`~perturb.image.Recipe` or :class:`VideoRecipe` called ``name``."""
    from ..image import RECIPES

    found = RECIPES.get(name) or VIDEO_RECIPES.get(name)
    if found is None:
        raise ValueError(f"unknown recipe {name!r}; expected one of {', '.join(RECIPE_NAMES)}")
    return found


def recipe_specs(recipe: Any, selection: str | Iterable[str | Spec] | None) -> list[Spec]:
    """The ops a recipe builds, each under its suite's table: ``selection`` (names, categories,
    ``suite:NAME``), or the recipe's default (ImageNet-C's 15; Kinetics-C's 12) when None. An op
    outside the suite is a ValueError naming the suite's members."""
    suite = REGISTRY.suite(recipe.suite)
    names = list(getattr(recipe, "default", ()) or suite.members) if selection is None else \
        [s.name for s in resolve(selection, "video")]
    outside = [n for n in names if n not in suite]
    if outside:
        raise ValueError(f"--recipe {recipe.name} builds the {suite.name} suite's ops; {', '.join(outside)} "
                         f"{'is' if len(outside) == 1 else 'are'} not among them ({', '.join(suite.members)})")
    return [REGISTRY.bind(REGISTRY.get(n, "video"), suite.name) for n in dict.fromkeys(names)]


def read_items(dataset: str | os.PathLike | Sequence[LabelledItem], kind: str) -> list[LabelledItem]:
    """The labelled items of a class folder (or a given list), every one of ``kind`` (image/video)."""
    items = read_class_folders(dataset) if isinstance(dataset, (str, os.PathLike)) else list(dataset)
    other = [it.item_id for it in items if it.kind != kind]
    if other:
        raise DatasetFormatError(f"{dataset if isinstance(dataset, (str, os.PathLike)) else 'items'}: "
                                 f"this recipe builds {kind}s; {other[0]!r} is not one ({len(other)} such)")
    return items


def relative(item: LabelledItem, name: str) -> str:
    """``<class>/<name>``: where an item's file goes under a corruption's severity folder."""
    return f"{item.label}/{name}"


def build_recipe(dataset: str | os.PathLike | Sequence[LabelledItem], out: str | os.PathLike, recipe: str, *,
                 video_perturbations: str | Iterable[str | Spec] | None = None,
                 severities: str | Iterable[int] = "1-5", seed: int = 0,
                 options: BuildOptions | None = None) -> BuildResult:
    """Build ``dataset`` (``root/<class>/<file>`` or a list of LabelledItem) in ``out`` as the
    named recipe's source did; resumes what an earlier run left. Seeds: ``item_seed(seed,
    item_id, perturbation, severity)``, so the bytes do not depend on engine, workers or order."""
    t0 = time.perf_counter()
    options = options_object(options, BuildOptions, "build")
    spec_of = recipe_of(recipe)
    if isinstance(dataset, (str, os.PathLike)) and (clash := written_input(out, OUTPUT_NAMES, [dataset])):
        raise BuildConflictError(f"{out}: the build writes {clash[0]}, which is or holds the dataset "
                                 f"{clash[1]}; expected an output folder apart from the dataset")
    image = not isinstance(spec_of, VideoRecipe)
    items = [_absolute(it)
             for it in read_items(dataset, "image" if image else "video")[:options.limit]]
    specs = recipe_specs(spec_of, video_perturbations)
    sevs = parse_severities(severities)
    root = Path(out).absolute()
    names = {it.item_id: spec_of.file_name(Path(it.path).name) if image else
             f"{Path(it.path).stem}.{options.output_format.ext}" for it in items}
    _check_unique(items, names)
    info = describe(dataset, spec_of, items, specs, sevs, seed, options, image)
    folders = [*{spec_of.folder(s.name) for s in specs}, *([CLEAN] if image else [])]

    def pending(manifest: Manifest) -> tuple[list[Any], list[str], BuildResult]:
        result, order, tasks = BuildResult(out=root), [], []
        for it in items:
            outs = []
            for spec in specs:
                for sev in spec.levels(sevs):
                    key = row_key(it.item_id, spec.ref, sev)
                    order.append(key)
                    path = f"{spec_of.folder(spec.name)}/{sev}/{relative(it, names[it.item_id])}"
                    if complete(manifest.rows.get(key), root, options.verify):
                        result.skipped += 1
                    else:
                        outs.append(Output(spec, sev, item_seed(seed, it.item_id, spec.ref, sev), path))
            clean = None
            if image:
                order.append(key := row_key(it.item_id, CLEAN, None))
                if complete(manifest.rows.get(key), root, options.verify):
                    result.skipped += 1
                else:
                    clean = f"{CLEAN}/{relative(it, names[it.item_id])}"
            if image and (outs or clean):
                tasks.append(ImageTask(it, tuple(outs), str(root), recipe, clean))
            elif outs:
                tasks.append(VideoTask(as_video_item(it), tuple(outs), str(root), options.output_format.name,
                                       options.preprocess))
        result.total = len(order)
        return tasks, order, result

    return execute(root, info, pending, options, t0, folders)


def _absolute(item: LabelledItem) -> LabelledItem:
    """The item with an absolute path, so a worker started in another directory finds it."""
    return replace(item, path=os.path.abspath(item.path))


def as_video_item(item: LabelledItem) -> Item:
    """A labelled video as the video builder's item (no captions)."""
    return Item(item.item_id, item.item_id, item.path, (), item.start, item.end, meta={"label": item.label})


def _check_unique(items: Sequence[LabelledItem], names: Mapping[str, str]) -> None:
    """Two items whose output file would be the same (same class, same saved name) are an error."""
    seen: dict[str, str] = {}
    for it in items:
        where = relative(it, names[it.item_id])
        first = seen.setdefault(where, it.item_id)
        if first != it.item_id:
            raise DatasetFormatError(f"items {first!r} and {it.item_id!r} would both be saved as {where}; "
                                     "rename one of them")


def describe(dataset: Any, recipe: Any, items: Sequence[LabelledItem], specs: Sequence[Spec],
             sevs: Sequence[int], seed: int, options: BuildOptions, image: bool) -> dict[str, Any]:
    """dataset.json of a recipe build: the recipe (name, source, format, options), the layout,
    the ops with their parameters, the seed."""
    from ..version import __version__

    fmt = options.output_format
    saved = {"format": recipe.format, "options": dict(recipe.options)} if image else \
        {"format": fmt.name, "options": {"ext": fmt.ext, "codec": fmt.codec, **dict(fmt.options)}}
    return {
        "perturb_version": __version__, "command": options.command,
        "dataset": os.fspath(dataset) if isinstance(dataset, (str, os.PathLike)) else None,
        "reader": "folder", "items": len(items), "classes": len({it.label for it in items}),
        "media": "image" if image else "video",
        "recipe": {"name": recipe.name, "source": recipe.source, "suite": recipe.suite, **saved},
        "seed": seed, "seed_rule": "derive_seed(seed, item_id, perturbation, severity)",
        "severities": list(sevs),
        "video_perturbations": [{"name": s.ref, "folder": recipe.folder(s.name), "category": s.category,
                                 "table": s.table or "own", "params": {str(v): s.params(v) for v in sevs}}
                                for s in specs],
        "text_perturbations": [], "per_frame": False,
        "format": {"name": "recipe", "ext": recipe.suffixes[0] if image else fmt.ext} if image else
        {"name": fmt.name, "ext": fmt.ext, "codec": fmt.codec, "options": dict(fmt.options), "summary": fmt.summary},
        "preprocess": {"resize": 256, "crop": 224} if image else options.preprocess.as_dict(),
        "layout": {"corrupted": "<corruption>/<severity>/<class>/<file>", "manifest": "manifest.jsonl",
                   **({"clean": "clean/<class>/<file>"} if image else {})},
    }
