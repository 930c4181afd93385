"""The runnable parts of the documentation: fenced blocks of Markdown files and usage lines of example scripts.

A Markdown fence's info string says what a block is. ``python`` blocks are executed; ``bash``, ``sh``
and ``shell`` blocks are run command by command (a trailing ``\\`` continues a command, ``#`` starts a
comment). Every other block must say what it is with a data info string (``text`` for synopses and
output listings, ``json``, ``yaml``, ...); a block with no info string is an error. A runnable block
that cannot run anywhere (a cluster, a GPU install) is preceded by ``<!-- no-run: REASON -->``.
A command whose comment says ``exits N`` is expected to exit with status N.
"""
from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

PYTHON = ("python",)
SHELL = ("bash", "sh", "shell")
DATA = ("text", "json", "yaml", "toml", "csv", "tsv")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+)(?P<info>[^`]*)$")
NO_RUN = re.compile(r"^\s*<!--\s*no-run:\s*(?P<reason>\S.*?)\s*-->\s*$")
EXIT = re.compile(r"\bexits? (\d+)\b")


@dataclass(frozen=True)
class Command:
    """One shell command of a block: its text, the line it starts on and the exit status expected."""

    text: str
    line: int
    expect: int = 0


@dataclass(frozen=True)
class Block:
    """One fenced block (or an example's usage lines): where it is, its language and its code."""

    path: Path
    line: int                      # line of the opening fence, 1-based
    lang: str
    code: str
    skip: str | None = None        # the no-run reason, if marked
    commands: tuple[Command, ...] = field(default=(), compare=False)

    @property
    def runnable(self) -> bool:
        return self.lang in PYTHON + SHELL and self.skip is None

    def where(self, line: int | None = None) -> str:
        return f"{self.path}:{line or self.line}"


def markdown_blocks(path: Path, text: str | None = None) -> list[Block]:
    """Every fenced block of a Markdown file, with shell blocks split into commands."""
    lines = (text if text is not None else path.read_text(encoding="utf-8")).splitlines()
    blocks: list[Block] = []
    k = 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        indent, fence, lang = len(m["indent"]), m["fence"], m["info"].strip().split(" ")[0].lower()
        end = k + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        if end == len(lines):
            raise ValueError(f"{path}:{k + 1}: unclosed code fence")
        body = [ln[indent:] if not ln[:indent].strip() else ln.lstrip() for ln in lines[k + 1:end]]
        code = "\n".join(body) + "\n"
        skip = _no_run_reason(lines, k)
        try:
            commands = tuple(shell_commands(code, k + 2)) if lang in SHELL else ()
        except ValueError as e:
            raise ValueError(f"{path}:{e}") from None
        blocks.append(Block(path, k + 1, lang, code, skip, commands))
        k = end + 1
    return blocks


def _no_run_reason(lines: list[str], fence: int) -> str | None:
    """The reason of a ``<!-- no-run: ... -->`` comment on the last non-blank line before a fence."""
    k = fence - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    m = NO_RUN.match(lines[k]) if k >= 0 else None
    return m["reason"] if m else None


def shell_commands(code: str, first_line: int) -> list[Command]:
    """Commands of a shell block: continuation lines joined, comments dropped, ``exits N`` read."""
    out: list[Command] = []
    pending, start = "", first_line
    for offset, raw in enumerate(code.splitlines()):
        if not pending:
            start = first_line + offset
        stripped = raw.strip()
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        if not whole or whole.startswith("#"):
            continue
        comment = _comment(whole)
        command = (whole[:len(whole) - len(comment) - 1] if comment else whole).strip()
        try:
            shlex.split(command)
        except ValueError as e:                               # unbalanced quotes
            raise ValueError(f"{start}: {e}: {command}") from None
        m = EXIT.search(comment)
        out.append(Command(command, start, int(m.group(1)) if m else 0))
    if pending:
        raise ValueError(f"{start}: a command ends with a line continuation")
    return out


def _comment(command: str) -> str:
    """The trailing comment of a command line: from a ``#`` that starts a word outside quotes
    (as in bash, so ``hf:NAME#MODE`` is not one), without the ``#``; or ''."""
    quote = None
    for k, ch in enumerate(command):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or command[k - 1].isspace()):
            return command[k + 1:]
    return ""


def example_blocks(path: Path, root: Path) -> list[Block]:
    """The usage lines of an example script's docstring (indented lines starting ``python ``),
    as one shell block."""
    source = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source), clean=False) or ""
    doc_start = next(k for k, ln in enumerate(source.splitlines(), 1) if '"""' in ln)
    commands = [Command(" ".join(ln.split()), doc_start + k)
                for k, ln in enumerate(doc.splitlines()) if ln.strip().startswith("python ")]
    rel = path.relative_to(root)
    return [Block(rel, commands[0].line, "bash", "\n".join(c.text for c in commands) + "\n", None,
                  tuple(commands))] if commands else []
