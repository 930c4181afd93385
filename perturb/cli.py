"""The ``perturb`` command. Each feature contributes its subcommands from its own module."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from .errors import UsageError  # noqa: F401  (re-exported for the subcommand modules)

# Modules that define ``register(subparsers)``; each subcommand sets ``func(args) -> int``.
COMMAND_MODULES = (
    "perturb.video.cli",
    "perturb.text.cli",
    "perturb.contrast.cli",
    "perturb.dataset.cli",
    "perturb.bench.cli",
    "perturb.bench.cache_cli",
    "perturb.gate.cli",
)


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The perturbation and severity selection shared by ``perturb build`` and ``perturb bench``."""
    sel = "all | none | CATEGORY,... | NAME,... (default: all)"
    parser.add_argument("--video-perturbations", default="all", metavar="SEL", help=sel)
    parser.add_argument("--severities", default="1-5", help="video severities, e.g. 1-5 or 1,3,5 (default: 1-5)")
    parser.add_argument("--text-perturbations", default="all", metavar="SEL", help=sel)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="perturb", description="Robustness of video-text retrieval models under perturbations.")
    parser.add_argument("--version", action="version", version=f"perturb {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name and module_name.startswith(e.name):      # feature not present in this build
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"perturb {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
