"""What a corrupted tree holds: ``<tree>/<corruption>/<severity>/<class>/<file>`` (ImageNet-C's and
Mini Kinetics-C's layout, published copies and ``perturb build --recipe`` output alike), its clean
images or videos, and the recipe that made it."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...dataset.items import LabelledItem
from ...dataset.labelled import read_class_folders
from ...errors import UnknownPerturbationError
from ...registry import REGISTRY

CLEAN = "clean"
LAYOUT = "<corruption>/<severity>/<class>/<file> (ImageNet-C's layout)"
DEFAULT_RECIPE = {"image": "imagenet-c", "video": "kinetics-c"}   # a published copy has no dataset.json


@dataclass(frozen=True)
class TreeLayout:
    """A corrupted tree: its folders by op (the op's registry name -> folder), severities per op,
    the clean folder, the media, the recipe and whether the clean files are the raw originals
    (a given folder: they get the recipe's resize and crop, as the source's clean evaluation does)."""

    root: Path
    folders: dict[str, str]                       # op name -> folder name under root
    severities: dict[str, list[int]]
    clean: Path
    media: str
    recipe: str
    suite: str
    raw_clean: bool
    items: list[LabelledItem] = field(default_factory=list)

    def perturbations(self) -> list[str]:
        """The ops present in the suite's order, each named under the recipe's suite
        (``shot_noise:imagenet-c``; an op outside the suite by its own name)."""
        members = list(REGISTRY.suite(self.suite).members or ())
        ops = sorted(self.folders, key=lambda op: (members.index(op) if op in members else len(members), op))
        return [REGISTRY.bind(REGISTRY.get(op, "video"), self.suite).ref if op in members else op for op in ops]


def not_a_tree(root: Path, why: str) -> ValueError:
    return ValueError(f"{root}: not a corrupted tree ({why}); expected {LAYOUT}, or pass a dataset folder")


def op_of(folder: str, recipe: str | None, root: Path) -> str:
    """The op a folder holds: the recipe's own name for it first (Kinetics-C's ``motion_blur`` is
    our ``temporal_blur``; with no recipe yet, any recipe's), else the registry's name."""
    from ...dataset.recipe_build import RECIPE_NAMES, recipe_of

    for name in [recipe] if recipe else RECIPE_NAMES:
        own = {f: op for op, f in recipe_of(name).folders.items()}
        if folder in own:
            return own[folder]
    try:
        return REGISTRY.get(folder, "video").name
    except UnknownPerturbationError:
        raise not_a_tree(root, f"{folder}/ is not a corruption's name") from None


def is_tree(path: str | os.PathLike) -> bool:
    """Whether ``path`` looks like a corrupted tree: a folder whose subfolders (``clean`` aside) all
    name corruptions (a class folder's do not)."""
    root = Path(path)
    if not root.is_dir():
        return False
    subs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != CLEAN]
    try:
        return bool(subs) and all(op_of(sub.name, None, root) for sub in subs)
    except ValueError:
        return False


def _severities(root: Path, folder: Path) -> list[int]:
    levels = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not levels or not all(s.isdigit() and 1 <= int(s) <= 5 for s in levels):
        raise not_a_tree(root, f"{folder.name}/ holds {', '.join(levels[:3]) or 'no folders'}, not severities 1..5")
    return [int(s) for s in levels]


def read_layout(path: str | os.PathLike, clean: str | os.PathLike | None = None) -> TreeLayout:
    """The layout of the tree at ``path``; its clean items from ``<tree>/clean`` or ``clean`` (a
    published ImageNet-C copy has none: the ImageNet validation folder). A folder that is not
    such a tree is a one-line ValueError."""
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"{root}: not a folder; expected a corrupted tree, {LAYOUT}")
    subs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != CLEAN)
    if not subs:
        raise not_a_tree(root, "no corruption folders")
    for sub in subs:
        op_of(sub.name, None, root)                      # every folder names a corruption...
    levels = {sub.name: _severities(root, sub) for sub in subs}     # ...and holds severities
    inside = root / CLEAN
    if clean is not None and not Path(clean).is_dir():
        raise ValueError(f"clean folder {os.fspath(clean)!r} does not exist; expected root/<class>/<file>")
    if clean is None and not inside.is_dir():
        raise ValueError(f"{root} has no clean/ folder (a published copy): pass the clean images' folder "
                         "(--clean DIR, e.g. the ImageNet validation folder, root/<class>/<file>)")
    clean_dir = Path(clean) if clean is not None else inside
    items = read_class_folders(clean_dir)
    media = items[0].kind
    info = root / "dataset.json"
    recorded = json.loads(info.read_text()).get("recipe") if info.exists() else None
    recipe = recorded["name"] if recorded else DEFAULT_RECIPE[media]
    suite = recorded.get("suite", recipe) if recorded else recipe
    folders = {op_of(sub.name, recipe, root): sub.name for sub in subs}
    severities = {op: levels[name] for op, name in folders.items()}
    return TreeLayout(root, folders, severities, clean_dir, media, recipe, suite,
                      raw_clean=clean is not None, items=items)
