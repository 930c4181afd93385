"""One registry for every perturbation, visual and text.

Each entry (a :class:`Spec`) says what a perturbation is: name, aliases, modality, category,
per-severity parameters, whether it is temporal, random or needs a model, the paper's values
and our deviations. ``perturb.list()``, ``perturb describe``, the CLI and the generated
catalogue all read from here, so they cannot drift.
"""
from __future__ import annotations

import numbers
import importlib
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from .errors import PerFrameError, UnknownPerturbationError
from .names import normalize, unknown_name

# The modules whose import registers each modality's perturbations, in listing order. They are
# imported on the registry's first lookup, so importing perturb (or perturb.gate) stays light.
PROVIDERS = {"text": "perturb.text", "video": "perturb.video"}
SUITE_PREFIX = "suite:"     # a selection item naming a suite: "suite:imagenet-c"
TABLE_SEP = ":"             # an entry under a suite's table: "contrast:kinetics-c"


@dataclass(frozen=True)
class Spec:
    """Everything the library knows about one perturbation."""

    name: str
    modality: str                      # "video" or "text"
    category: str
    fn: Callable[..., Any] | None = None   # text: the function applied; video ops have ``render``
    summary: str = ""
    aliases: tuple[str, ...] = ()
    severities: Mapping[int, Mapping[str, Any]] | None = None   # our params per severity
    paper: Mapping[int, Mapping[str, Any]] | None = None        # the paper's, where they differ
    deviation: str = ""                # why ours differs from the paper / reference code
    default_severity: int | None = 3
    temporal: bool = False
    stream: bool = False               # video: its meaning needs a coded stream (inter-frame codecs, stream faults)
    random: bool = True
    needs_model: bool = False
    needs_parse: bool = False          # text: runs on a spaCy Doc
    resources: tuple[str, ...] = ()    # text: NLP resources used
    extra: Mapping[str, Any] = field(default_factory=dict)
    # video: how parameters are drawn and frames rendered, per backend (perturb.video.render.Renderer)
    render: Any = None
    version: int = 1                   # implementation version: bump when the output changes (cache key)
    table: str = ""                    # the suite whose parameter table ``severities`` holds ("": its own)
    per_frame: bool = False            # video: a new layer every frame (see with_per_frame), in params

    @property
    def ref(self) -> str:
        """The name that selects this entry with its table: ``contrast`` or ``contrast:kinetics-c``."""
        return f"{self.name}{TABLE_SEP}{self.table}" if self.table else self.name

    @property
    def has_severity(self) -> bool:
        return self.severities is not None

    def levels(self, severities: Iterable[int]) -> tuple[int | None, ...]:
        """The severities it runs at when ``severities`` are asked for: those, or (None,) for a
        perturbation without levels (the dataset builder and the benchmark runner both expand so)."""
        return tuple(severities) if self.has_severity else (None,)

    @property
    def applies_to_images(self) -> bool:
        """Whether the op has a meaning on one image: a visual op that is neither temporal nor
        needs a coded stream (:mod:`perturb.image` renders it as a one-frame clip)."""
        return self.modality == "video" and not self.temporal and not self.stream

    @property
    def takes_per_frame(self) -> bool:
        """Whether the op takes ``per_frame`` (its entry says so: ``extra["per_frame"]``)."""
        return bool(self.extra.get("per_frame"))

    def with_per_frame(self, per_frame: bool = True) -> Spec:
        """This op drawing a new layer every frame (``per_frame`` in its parameters) when asked and
        it takes the option; else itself. The API, the builder and the runner all ask here."""
        import numpy as np              # here, so that importing the registry stays light

        if not isinstance(per_frame, (bool, np.bool_)):
            raise ValueError(f"per_frame must be True or False; got {per_frame!r}")
        return replace(self, per_frame=True) if per_frame and self.takes_per_frame else self

    def params(self, severity: int | None) -> dict[str, Any]:
        """The parameters at a severity (validated); {} for perturbations without severities."""
        options = {"per_frame": True} if self.per_frame else {}
        if self.severities is None:
            if severity is not None:
                raise ValueError(f"{self.name} has no severity levels; got severity={severity!r}")
            return options
        if severity is None:
            severity = self.default_severity
        # numpy integers count as ints; bools do not, though Python makes them ints
        valid = isinstance(severity, numbers.Integral) and not isinstance(severity, bool)
        if not valid or int(severity) not in self.severities:
            raise ValueError(f"severity must be an int in {_levels(self.severities)} for "
                             f"{self.name}; got {severity!r}")
        return {**self.severities[int(severity)], **options}


def _levels(severities: Mapping[int, Any]) -> str:
    """The valid severities as written in messages: '1..5' when contiguous, else '1, 3, 5'."""
    keys = sorted(severities)
    if keys == list(range(keys[0], keys[-1] + 1)):
        return f"{keys[0]}..{keys[-1]}"
    return ", ".join(map(str, keys))


@dataclass(frozen=True)
class Suite:
    """A named set of perturbations of one modality, with the parameter tables it carries."""

    name: str
    modality: str
    members: tuple[str, ...] | None    # canonical names; None: every perturbation of the modality
    tables: Mapping[str, Mapping[int, Mapping[str, Any]]] = field(default_factory=dict)
    title: str = ""                    # what it is, in a few words
    source: str = ""                   # where its members and tables come from
    figures: tuple[str, ...] = ()      # the source paper's summary figures (mPC, rPC, mCE...)

    def __contains__(self, name: str) -> bool:
        return self.members is None or name in self.members


class Registry:
    """Name → Spec, with aliases and 'did you mean' suggestions; suites of names."""

    def __init__(self, providers: Mapping[str, str] | None = None) -> None:
        self._specs: dict[str, Spec] = {}
        self._keys: dict[str, str] = {}     # normalized name or alias -> canonical name
        self._providers = dict(providers or {})   # modality -> module not imported yet
        self._order = {m: i for i, m in enumerate(self._providers)}
        self._loading = threading.RLock()
        self._suites: dict[str, Suite] = {}   # normalized name -> suite

    def _load(self, modality: str | None = None) -> None:
        """Import the provider modules of ``modality`` (None: all) once; they register on import."""
        if not self._providers:
            return
        with self._loading:     # other threads wait until the registry is whole
            for m in [m for m in self._providers if modality is None or m == modality]:
                module = self._providers.get(m)
                if module is not None:
                    importlib.import_module(module)
                    self._providers.pop(m, None)

    def _ordered(self) -> list[Spec]:
        """Every spec: modalities in provider order, registration order within each."""
        return sorted(self._specs.values(), key=lambda s: self._order.get(s.modality, len(self._order)))

    def register(self, spec: Spec) -> Spec:
        if spec.modality == "video" and spec.render is None:
            raise ValueError(f"video perturbation {spec.name} needs a renderer (Spec.render); got None")
        for key in (spec.name, *spec.aliases):
            k = normalize(key)
            owner = self._keys.get(k)
            if owner is not None and owner != spec.name:
                raise ValueError(f"name {key!r} of {spec.name} is already taken by {owner}")
            self._keys[k] = spec.name
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str, modality: str | None = None) -> Spec:
        if isinstance(name, Spec):
            return name
        if not isinstance(name, str):
            raise ValueError(f"a perturbation name must be a str; got {type(name).__name__}")
        if TABLE_SEP in name:                   # "contrast:kinetics-c": the op under a suite's table
            base, _, suite = name.partition(TABLE_SEP)
            if normalize(base) == normalize(SUITE_PREFIX.rstrip(TABLE_SEP)):
                raise UnknownPerturbationError(f"{name!r} names a suite, which selects several perturbations: "
                                               f"use it as a selection (e.g. --video-perturbations {name})")
            return self.bind(self.get(base.strip(), modality), suite.strip())
        self._load(modality)
        canonical = self._keys.get(normalize(name))
        spec = self._specs.get(canonical) if canonical else None
        if spec is None and modality is not None:      # perhaps a perturbation of another modality
            self._load()
            canonical = self._keys.get(normalize(name))
            spec = self._specs.get(canonical) if canonical else None
        if spec is not None and modality is not None and spec.modality != modality:
            raise UnknownPerturbationError(
                f"{name!r} is a {spec.modality} perturbation, not a {modality} one; apply it with "
                f"perturb.{spec.modality}.apply (or select it with --{spec.modality}-perturbations)")
        if spec is None:
            pool = [s for s in self._specs.values() if modality is None or s.modality == modality]
            raise UnknownPerturbationError(self._unknown_message(name, pool, modality))
        return spec

    @staticmethod
    def _unknown_message(name: str, pool: list[Spec], modality: str | None) -> str:
        spellings = {k: s.name for s in pool for k in (s.name, *s.aliases)}
        kind = f"{modality} perturbation" if modality else "perturbation"
        return unknown_name(kind, name, spellings, sorted(s.name for s in pool), n=5, cutoff=0.5)

    def __contains__(self, name: str) -> bool:
        self._load()
        return normalize(name) in self._keys

    def __iter__(self):
        self._load()
        return iter(self._ordered())

    def __len__(self) -> int:
        self._load()
        return len(self._specs)

    # ------------------------------------------------------------------------------ suites
    def add_suite(self, suite: Suite) -> Suite:
        """Register a suite (its members need not be registered yet: they are checked on use)."""
        self._suites[normalize(suite.name)] = suite
        return suite

    def suite(self, name: str) -> Suite:
        """The suite called ``name`` (case, dash and space insensitive); an error lists the suites."""
        self._load()
        found = self._suites.get(normalize(str(name).removeprefix(SUITE_PREFIX)))
        if found is None:
            names = [s.name for s in self.suites()]
            raise UnknownPerturbationError(unknown_name("suite", name, {n: n for n in names}, names))
        return found

    def suites(self, modality: str | None = None) -> list[Suite]:
        """Every registered suite, in registration order."""
        self._load()
        return [s for s in self._suites.values() if modality is None or s.modality == modality]

    def suites_of(self, name: str | Spec) -> list[str]:
        """The names of the suites ``name`` (or a Spec) belongs to."""
        spec = self.get(name)
        return [s.name for s in self.suites(spec.modality) if spec.name in s]

    def missing(self, suite: str) -> list[str]:
        """Members of ``suite`` that are not registered in this installation."""
        s = self.suite(suite)
        return [n for n in (s.members or ()) if normalize(n) not in self._keys]

    def suite_specs(self, suite: str, missing_ok: bool = False) -> list[Spec]:
        """The members of ``suite``, each under the suite's table, in listing order.

        A member that is not registered is an UnknownPerturbationError naming it, unless
        ``missing_ok`` (then it is left out: see :meth:`missing`).
        """
        s = self.suite(suite)
        absent = self.missing(s.name)
        if absent and not missing_ok:
            raise UnknownPerturbationError(
                f"suite {s.name} needs {', '.join(absent)}, which {'is' if len(absent) == 1 else 'are'} "
                f"not registered in this installation")
        return [self.bind(spec, s.name) for spec in self.select(s.modality) if spec.name in s]

    def bind(self, spec: Spec, suite: str) -> Spec:
        """``spec`` under ``suite``'s parameter table: a copy whose ``table`` names the suite, or
        ``spec`` itself where the suite uses the op's own values."""
        s = self.suite(suite)
        if spec.table:                          # start from the op's own table
            spec = self.get(spec.name, spec.modality)
        if spec.modality != s.modality or spec.name not in s:
            raise UnknownPerturbationError(
                f"{spec.name} is not in suite {s.name}; it is in: {', '.join(self.suites_of(spec)) or 'none'}")
        replaced = s.tables.get(spec.name)
        if not replaced or spec.severities is None:
            return spec
        own = spec.severities
        unknown = sorted({k for row in replaced.values() for k in row} - {k for row in own.values() for k in row})
        if unknown or set(replaced) != set(own):
            raise ValueError(f"suite {s.name}'s table for {spec.name} names parameters {unknown} or "
                             f"severities {sorted(replaced)}; expected parameters among "
                             f"{sorted({k for row in own.values() for k in row})} at severities {sorted(own)}")
        merged = {sev: {**own[sev], **replaced[sev]} for sev in own}
        if merged == {sev: dict(own[sev]) for sev in own}:
            return spec
        return replace(spec, severities=merged, paper=None, table=s.name)

    def select(self, modality: str | None = None, category: str | None = None,
               names: Iterable[str] | None = None) -> list[Spec]:
        """Specs filtered by modality and/or category, in listing order (see :meth:`_ordered`)."""
        self._load(modality)
        out = [s for s in self._ordered()
               if (modality is None or s.modality == modality)
               and (category is None or normalize(s.category) == normalize(category))]
        if names is not None:
            wanted = {self.get(n, modality).name for n in names}
            out = [s for s in out if s.name in wanted]
        return out

    def categories(self, modality: str | None = None) -> list[str]:
        return list(dict.fromkeys(s.category for s in self.select(modality)))

    def resolve(self, selection: str | Iterable[str], modality: str) -> list[Spec]:
        """Expand 'all', 'none', category names, ``suite:NAME``, perturbation names and
        ``NAME:SUITE`` (the op under a suite's table); comma-separated ok. A suite's members
        come under the suite's tables."""
        items = selection.split(",") if isinstance(selection, str) else list(selection)
        items = [i.strip() for i in items if i and i.strip()]
        if not items or [normalize(i) for i in items] == ["none"]:
            return []
        cats = {normalize(c): c for c in self.categories(modality)}
        chosen: dict[str, Spec] = {}
        for item in items:
            key = normalize(item)
            if item.lower().startswith(SUITE_PREFIX):
                suite = self.suite(item[len(SUITE_PREFIX):].strip())
                if suite.modality != modality:
                    raise UnknownPerturbationError(f"suite {suite.name} holds {suite.modality} "
                                                   f"perturbations; expected a {modality} selection")
                chosen.update((s.ref, s) for s in self.suite_specs(suite.name))
            elif key == "all":
                chosen.update((s.ref, s) for s in self.select(modality))
            elif key in cats:
                chosen.update((s.ref, s) for s in self.select(modality, cats[key]))
            else:
                spec = self.get(item, modality)
                chosen[spec.ref] = spec
        order = {s.name: i for i, s in enumerate(self.select(modality))}
        return sorted(chosen.values(), key=lambda s: (order[s.name], s.table))


def per_frame_ops() -> list[str]:
    """The video ops that take ``per_frame=True`` (a new weather layer every frame), by name."""
    return sorted(s.name for s in REGISTRY.select("video") if s.takes_per_frame)


def per_frame_selection(specs: Iterable[Spec], per_frame: bool) -> list[Spec]:
    """``specs`` with ``per_frame`` set on those that take it (:meth:`Spec.with_per_frame`); asked
    of ops none of which takes it, a PerFrameError naming the ops that do."""
    specs = list(specs)
    chosen = [s.with_per_frame(per_frame) for s in specs]
    if per_frame and not any(s.takes_per_frame for s in specs):
        names = [s.name for s in specs]
        who = (f"{names[0]} has no per_frame option" if len(names) == 1 else
               f"none of {', '.join(names)} has a per_frame option" if names else "no video op is selected")
        takers = per_frame_ops()
        raise PerFrameError(f"{who}; ops that take it: {', '.join(takers)}", tuple(takers))
    return chosen


REGISTRY = Registry(PROVIDERS)
register = REGISTRY.register
get = REGISTRY.get
