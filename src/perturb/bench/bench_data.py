"""What ``perturb bench`` runs on, from its command line: the dataset (captions, or a labelled
dataset for ``--task classify``) and the selection of perturbations and severities."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..errors import UsageError


def selection(args: argparse.Namespace,
               built: Any) -> tuple[tuple[int, ...], list[str], list[str], list[dict[str, Any]]]:
    """Severities, video and text perturbations: the options given, else what ``built`` holds, else
    the defaults; then the text perturbations left out because they cannot run here."""
    from ..registry import REGISTRY
    from ..selection import DEFAULT_VIDEO_SELECTION, SEVERITY_LEVELS, parse_severities
    from ..text.availability import runnable

    video, text, sevs = built.selection() if built is not None else (DEFAULT_VIDEO_SELECTION, "all", SEVERITY_LEVELS)
    severities = parse_severities(args.severities if args.severities is not None else sevs or SEVERITY_LEVELS)
    video = REGISTRY.resolve(args.video_perturbations if args.video_perturbations is not None else video, "video")
    given = args.text_perturbations is not None
    text, left_out = runnable(args.text_perturbations if given else text, "--text-perturbations" if given else None)
    return severities, [s.ref for s in video], [s.name for s in text], left_out


def check_built(built: Any, data: Any, jobs: list[Any]) -> None:
    """Every output the jobs read must be in the built directory: else a UsageError before any work."""
    missing = built.missing(data.items, [(j.video, j.severity) for j in jobs], [j.text for j in jobs])
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise UsageError(f"--built {built.root} lacks {len(missing)} requested output(s): {shown}; "
                         f"build them with `perturb build`, or leave out --video-perturbations, "
                         f"--text-perturbations and --severities to bench what was built")


def bench_data(args: argparse.Namespace, tree: Any = None):
    """The run's data: a corrupted ``tree``'s items, a labelled dataset (--task classify), or captions."""
    from ..dataset.readers import read_dataset
    from .pipeline.data import make_data

    if args.built:
        info = json.loads((Path(args.built) / "dataset.json").read_text()) \
            if (Path(args.built) / "dataset.json").exists() else None
        if not info or not info.get("dataset"):
            raise UsageError(f"--built {args.built}: expected dataset.json naming the source dataset")
        path, reader = info["dataset"], args.reader or info.get("reader")
    else:
        path, reader = args.dataset, args.reader
    if args.task == "classify":
        return labelled_data(args, path, reader, tree)
    if isinstance(args.subset, str):
        raise UsageError(f"--subset {args.subset}: a file of names applies to --task classify; "
                         "expected a number of items")
    items = read_dataset(path, reader)
    return make_data(items, dataset_name(path), str(path), subset=args.subset, seed=args.seed,
                     captions=args.captions, judgements=args.judgements)


def tree_of(args: argparse.Namespace) -> Any:
    """With --task classify, the source of a --dataset folder that is a corrupted tree
    (``<corruption>/<severity>/<class>/<file>``, clean images in ``clean/`` or --clean), else None."""
    from .pipeline.tree import tree_source
    from .pipeline.tree_layout import is_tree

    if args.task != "classify" or not args.dataset or not is_tree(args.dataset):
        if args.clean:
            raise UsageError("--clean names the clean images of a corrupted tree (--task classify --dataset TREE)")
        return None
    return tree_source(args.dataset, clean=args.clean)[1]


def classify_selection(args: argparse.Namespace, video: list[str], text: list[str], left_out: list[Any],
                        media: str) -> tuple[list[str], list[str], list[Any]]:
    """A classification run perturbs only the visual side: text only when named (then refused); on
    images the default selection keeps the ops that apply to one image."""
    from .pipeline.classify import image_selection

    if args.video_perturbations is None and media == "image":
        video = image_selection(video)
    return video, text if args.text_perturbations is not None else [], []


def labelled_data(args: argparse.Namespace, path: str, reader: str | None, tree: Any = None) -> Any:
    """A classification run's labelled data: read, kept to --subset FILE, or N items drawn."""
    from ..dataset.labelled import read_labelled
    from ..dataset.subset import keep_subset
    from .pipeline.data import make_labelled_data

    items = tree.layout.items if tree is not None else read_labelled(path, reader, args.videos)
    names = args.subset if isinstance(args.subset, str) else None        # --subset FILE, else N or None
    if names is not None:
        items = keep_subset(items, names)
    data = make_labelled_data(items, dataset_name(path), str(path), subset=None if names else args.subset,
                              seed=args.seed)
    if names is not None:
        data.subset = names
    return data


def dataset_name(path: str) -> str:
    """A dataset's name in results: its file's stem, or its folder's name."""
    return Path(path).stem if Path(path).is_file() else Path(path).name
