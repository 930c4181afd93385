"""The jobs of a benchmark: the (modality, perturbation, severity) configurations to run, as :class:`Job`s."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...registry import REGISTRY, SUITE_PREFIX
from .sources import CLEAN

@dataclass(frozen=True)
class Job:
    """One configuration: which video and which text version are compared."""

    modality: str                       # "clean", "video", "text" or "both"
    video: str = CLEAN
    severity: int | None = None
    text: str = CLEAN

    @property
    def perturbation(self) -> str:
        if self.modality == "both":
            return f"{self.video}+{self.text}"
        return {"video": self.video, "text": self.text}.get(self.modality, CLEAN)

    @property
    def category(self) -> str:
        video = REGISTRY.get(self.video, "video").category if self.video != CLEAN else None
        text = REGISTRY.get(self.text, "text").category if self.text != CLEAN else None
        return "+".join(c for c in (video, text) if c) or CLEAN

    def label(self) -> str:
        sev = f"@{self.severity}" if self.severity is not None else ""
        return f"{self.modality}:{self.perturbation}{sev}"


def caption_sets(jobs: Sequence[Job]) -> list[str]:
    """The caption sets a run embeds: clean first, then each text perturbation once, in job order."""
    return list(dict.fromkeys([CLEAN] + [j.text for j in jobs if j.modality in ("text", "both")]))


def jobs_of(video: Sequence[str] = (), text: Sequence[str] = (), severities: Sequence[int] = (1, 2, 3, 4, 5),
            pairs: Sequence[tuple[str, str]] = ()) -> list[Job]:
    """Jobs for every video perturbation x severity, every text perturbation, and each pair, each
    once (two suites sharing an op under the same table run it once). A video item may name a
    suite (``suite:kinetics-c``): its members, under its tables."""
    jobs: list[Job] = []
    for name in video:
        specs = REGISTRY.resolve([name], "video") if name.lower().startswith(SUITE_PREFIX) \
            else [REGISTRY.get(name, "video")]
        for spec, sev in ((s, v) for s in specs for v in s.levels(severities)):
            spec.params(sev)
            jobs.append(Job("video", spec.ref, sev))
    jobs += [Job("text", text=REGISTRY.get(name, "text").name) for name in text]
    for vname, tname in pairs:
        vspec, tspec = REGISTRY.get(vname, "video"), REGISTRY.get(tname, "text")
        jobs += [Job("both", vspec.ref, sev, tspec.name) for sev in vspec.levels(severities)]
    return list(dict.fromkeys(jobs))
