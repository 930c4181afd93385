"""Each perturbation's measured speed and fidelity against its reference, read from the benchmark
results (``benchmarks/results/*.json``) when the catalogue is generated: the figures live with the
runs that measured them, not in the registrations, so a kernel change cannot leave them stale."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
# result sections that time an op against a reference, and who that reference is when the
# section does not name it
SECTIONS = {"visual": "the reference", "kinetics": "the reference",
            "codecs": "the ffmpeg command line", "kinetics-codecs": "the ffmpeg command line"}


@dataclass(frozen=True)
class Measured:
    """One op's rows (one per severity) from one section of one results file."""

    source: str                      # the results file's name
    section: str
    rows: tuple[Mapping[str, Any], ...]
    setting: Mapping[str, Any]       # the section's other keys: frames, size, peer

    def peer(self) -> str:
        peer = self.setting.get("peer")
        if isinstance(peer, Mapping) and peer.get("package"):
            return f"{peer['package']} {peer.get('version', '')}".strip()
        if isinstance(peer, Mapping) and peer.get("reference"):
            return str(peer["reference"])
        return SECTIONS[self.section]

    def sentence(self) -> str:
        """The figures as one sentence for the catalogue."""
        speeds = [float(r["speedup"]) for r in self.rows]
        low, high = f"{min(speeds):.1f}", f"{max(speeds):.1f}"
        size = self.setting.get("size")
        clip = f"{self.setting.get('frames', '?')} frames" + (f" at {size[0]}x{size[1]}" if size else "")
        levels = ", ".join(str(r["severity"]) for r in self.rows)
        fidelity = "; ".join(f"severity {r['severity']}: {text}" for r in self.rows if (text := _fidelity(r)))
        return (f"Against {self.peer()} on the sample clip ({clip}, severities {levels}; "
                f"benchmarks/results/{self.source}): {low if low == high else f'{low}-{high}'}x as fast "
                f"per clip" + (f"; {fidelity}" if fidelity else "") + ".")


def _fidelity(row: Mapping[str, Any]) -> str:
    """How close the output came to the reference's, as the benchmark wrote it."""
    eq = row.get("equivalence")
    if isinstance(eq, Mapping) and eq.get("text"):
        return str(eq["text"])
    ours = row.get("psnr_ours_db", row.get("psnr_ours_mean_db"))
    theirs = row.get("psnr_ffmpeg_db")
    if not (isinstance(ours, (int, float)) and isinstance(theirs, (int, float))):
        return ""
    between = row.get("psnr_between_db")
    apart = ("; frames identical" if between == "inf" else
             f"; {between:.1f} dB between the two" if isinstance(between, (int, float)) else "")
    return f"PSNR to the clean clip {ours:.1f}/{theirs:.1f} dB (ours/ffmpeg){apart}"


def load(directory: Path = RESULTS) -> dict[str, Measured]:
    """Every op's figures from the newest results file (by its ``date``) that times it against a
    reference; {} where the results are not there (an installed package)."""
    best: dict[str, tuple[tuple[str, str], Measured]] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        when = (str(data.get("date", "")), path.name)
        for section, body in data.items():
            if section not in SECTIONS or not isinstance(body, dict) or not isinstance(body.get("rows"), list):
                continue
            by_op: dict[str, list[Mapping[str, Any]]] = {}
            for row in body["rows"]:
                if isinstance(row, dict) and "op" in row and isinstance(row.get("speedup"), (int, float)):
                    by_op.setdefault(str(row["op"]), []).append(row)
            setting = {k: v for k, v in body.items() if k != "rows"}
            for op, rows in by_op.items():
                if op not in best or when > best[op][0]:
                    best[op] = (when, Measured(path.name, section, tuple(rows), setting))
    return {op: measured for op, (_, measured) in best.items()}
