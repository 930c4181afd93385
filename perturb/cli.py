"""The ``perturb`` command. Each feature contributes its subcommands from its own module."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from .errors import UsageError

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


def build_parser() -> argparse.ArgumentParser:
    from .version import __version__

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
