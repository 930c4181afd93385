"""Show outcomes: a rich table on the terminal, a Markdown table for a pull-request comment."""
from __future__ import annotations

from typing import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .outcome import FAIL, PASS, Outcome

STYLE = {PASS: "green", FAIL: "bold red"}
_NUMERIC = ("value", "threshold", "baseline", "current", "drop", "p")


def _columns(outcomes: Sequence[Outcome]) -> list[str]:
    return list(dict.fromkeys(k for o in outcomes for k in o.cells))


def tally(outcomes: Sequence[Outcome]) -> str:
    """'5 checks: 4 passed, 1 failed'."""
    failed = sum(o.failed for o in outcomes)
    info = sum(o.status not in (PASS, FAIL) for o in outcomes)
    extra = f", {info} informational" if info else ""
    return f"{len(outcomes)} checks: {len(outcomes) - failed - info} passed, {failed} failed{extra}"


def _console() -> Console:
    """The terminal's width, or a wide log (CI) when output is not a terminal."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    return console


def print_table(outcomes: Sequence[Outcome], title: str, notes: Sequence[str] = (),
                console: Console | None = None) -> None:
    """Every outcome as a row, failures in red, then the tally."""
    console = console or _console()
    table = Table(title=title, show_lines=False)
    columns = _columns(outcomes)
    for col in columns:
        table.add_column(col, overflow="fold", justify="right" if col in _NUMERIC else "left",
                         no_wrap=col != "detail")
    for o in outcomes:
        table.add_row(*(escape(str(o.cells.get(c, ""))) for c in columns), style=STYLE.get(o.status))
    for note in notes:                  # cells and notes are text: '.[text]' is not a style tag
        console.print(f"[yellow]note:[/] {escape(note)}")
    console.print(table)
    console.print(("[bold red]FAILED[/] " if any(o.failed for o in outcomes) else "[green]OK[/] ")
                  + tally(outcomes))


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(outcomes: Sequence[Outcome], title: str, notes: Sequence[str] = ()) -> str:
    """A Markdown summary: headline, notes, failures first, then the full table."""
    failed = [o for o in outcomes if o.failed]
    head = f"### {title}: {'❌ failed' if failed else '✅ passed'}"
    lines = [head, "", tally(outcomes) + ".", ""]
    lines += [f"> **note:** {_md_cell(n)}" for n in notes] + ([""] if notes else [])
    if failed:
        lines += ["**Failed:**", ""] + [f"- `{_md_cell(o.name)}` — {_md_cell(o.message)}" for o in failed]
        lines.append("")
    columns = _columns(outcomes)
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "|".join("---:" if c in _NUMERIC else "---" for c in columns) + "|")
    for o in outcomes:
        cells = [_md_cell(o.cells.get(c, "")) for c in columns]
        if o.failed:
            cells = [f"**{c}**" if c else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
