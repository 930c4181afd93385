"""The ``perturb`` command. Each feature contributes its subcommands from its own module."""
from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from typing import NoReturn, Sequence

from .errors import UsageError

# Modules that define ``register(subparsers)``; each subcommand sets ``func(args) -> int``.
COMMAND_MODULES = (
    "perturb.video.cli",
    "perturb.text.cli",
    "perturb.contrast.cli",
    "perturb.dataset.cli",
    "perturb.bench.cli",
    "perturb.bench.report_cli",
    "perturb.bench.cache_cli",
    "perturb.gate.cli",
    "perturb.lmms.tasks_cli",
    "perturb.lmms.score_cli",
)


# Exit status of a command whose reader went away (``perturb cache ls | head``): 128 + SIGPIPE.
BROKEN_PIPE = 141


def _choices(text: str) -> str:
    """argparse's choice list, as ``1..5`` when it is a run of consecutive integers."""
    names = [c.strip().strip("'") for c in text.split(",")]
    if all(re.fullmatch(r"-?\d+", n) for n in names) and len(names) > 2:
        numbers = [int(n) for n in names]
        if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            return f"{numbers[0]}..{numbers[-1]}"
    return "one of " + ", ".join(names)


def one_line(message: str) -> str:
    """argparse's message put as ``OPTION must be WHAT; got VALUE``."""
    m = re.fullmatch(r"argument (\S+?)(?:/\S+)*: invalid choice: (.*) \(choose from (.*)\)", message)
    if m:
        return f"{m[1]} must be {_choices(m[3])}; got {m[2]}"
    m = re.fullmatch(r"argument (\S+?)(?:/\S+)*: invalid (int|float) value: (.*)", message)
    if m:
        return f"{m[1]} must be {'an integer' if m[2] == 'int' else 'a number'}; got {m[3]}"
    m = re.fullmatch(r"argument (\S+?)(?:/\S+)*: (.*)", message)
    if m:
        return f"{m[1]} {m[2]}"
    return message


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors on one line: ``perturb apply: error: --severity must be 1..5;
    got 0 (see perturb apply --help)``, exit status 2. Subcommand parsers inherit it."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .version import __version__

    parser = OneLineParser(
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
    """Run one command; the exit status: 0 done, 1 failures, 2 usage, 130 interrupted, 141 broken pipe."""
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:                                # named by the subcommand they were given to
            _leaf(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as e:                      # --help, --version, usage errors (one line printed)
        return e.code if isinstance(e.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()                       # a closed pipe shows here, not at interpreter exit
        return code
    except UsageError as e:
        print(f"{_leaf(parser, args).prog}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE


def _leaf(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)subcommand parser ``args`` came through (``perturb cache rm``), else ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return _leaf(chosen, args)
    return parser


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush into the closed pipe is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):         # stdout without a file descriptor
        pass


if __name__ == "__main__":
    sys.exit(main())
