"""``assert_robust``: run a small robustness benchmark on a model and fail a test when it falls short."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import UnknownPerturbationError
from ..fileio import write_json
from ..gate.check import check, not_run
from ..gate.compare import DEFAULT_MAX_DROP, compare
from ..gate.outcome import Outcome
from ..gate.rules import Rule, parse_rule
from ..options import options_object
from ..registry import REGISTRY
from ..results import Results, load_results, validate


class RobustnessError(AssertionError):
    """A model fell short of its robustness bounds; the message names the perturbations."""

    def __init__(self, message: str, failures: Sequence[Outcome], results: Results) -> None:
        super().__init__(message)
        self.failures = list(failures)
        self.results = results


@dataclass(frozen=True, kw_only=True)
class RobustOptions:
    """How :func:`assert_robust` benchmarks and compares, beyond its bounds: the ``severities``
    run, the ``metric`` (γ's and the one compared), a ``subset`` of N items chosen from ``seed``
    (None: every item; the ``perturb_robust`` fixture fills both from its command line, a ``seed``
    of None is 0), ``bootstrap`` resamples (None: 200 with ``significance``, else none), and the
    comparison with a baseline: ``max_drop``, ``significance`` and ``compare_metrics`` (None: γr
    and ``metric``). ``task``: ``"retrieve"`` or ``"classify"`` (None: ``classify`` for a classifier
    object, with ``metric`` top1 unless another is given, else ``retrieve``); a classification
    dataset is a labelled folder or file (:func:`perturb.dataset.labelled.read_labelled`)."""

    severities: Sequence[int] = (3,)
    metric: str | None = None
    task: str | None = None
    subset: int | None = None
    seed: int | None = None
    bootstrap: int | None = None
    max_drop: float = DEFAULT_MAX_DROP
    significance: float | None = None
    compare_metrics: Sequence[str] | None = None


def split_by_modality(perturbations: str | Sequence[str]) -> dict[str, list[str]]:
    """Names or categories → {'video': [...], 'text': [...]}, in registry order."""
    items = [perturbations] if isinstance(perturbations, str) else list(perturbations)
    chosen: dict[str, list[str]] = {"video": [], "text": []}
    for item in items:
        for modality in chosen:
            try:
                names = [s.ref for s in REGISTRY.resolve([item], modality)]
            except UnknownPerturbationError:
                continue
            chosen[modality] += [n for n in names if n not in chosen[modality]]
            break
        else:
            REGISTRY.get(item)          # raises, with the closest names
    if not chosen["video"] and not chosen["text"]:
        raise ValueError("assert_robust needs at least one perturbation, e.g. perturbations=['noise']")
    return chosen


def _data(dataset: Any, subset: int | None, seed: int, task: str) -> Any:
    """A BenchData from a BenchData (re-subset) or from a dataset file readable by perturb's readers
    (a labelled dataset's for a classification run)."""
    from ..bench.pipeline.data import BenchData, make_data, make_labelled_data

    if isinstance(dataset, BenchData):
        if subset is None and seed == dataset.seed:
            return dataset
        data = make_data(dataset.items, dataset.name, dataset.path, subset=subset, seed=seed)
        data.media = dataset.media
        return data
    if task == "classify":
        from ..dataset.labelled import read_labelled
        return make_labelled_data(read_labelled(dataset), Path(dataset).name, str(dataset), subset=subset, seed=seed)
    from ..dataset.readers import read_dataset
    return make_data(read_dataset(dataset), Path(dataset).stem, str(dataset), subset=subset, seed=seed)


def _rules(min_gamma_r: float | None, min_gamma_a: float | None, rules: Sequence[str | Rule]) -> list[Rule]:
    out = [Rule(name, value) for name, value in (("gamma_r", min_gamma_r), ("gamma_a", min_gamma_a))
           if value is not None]
    return out + [r if isinstance(r, Rule) else parse_rule(r) for r in rules]


def _baseline(baseline: str | Path | Mapping[str, Any] | Results) -> Results:
    if isinstance(baseline, Results):
        return baseline
    if isinstance(baseline, Mapping):
        return validate(baseline, "baseline")
    return load_results(baseline)


def _message(model: Any, failures: Sequence[Outcome]) -> str:
    name = getattr(model, "id", None) or (model if isinstance(model, str) else type(model).__name__)
    lines = [f"{name} is not robust enough ({len(failures)} check(s) failed):"]
    lines += [f"  - {o.name}: {o.message}" for o in failures]
    return "\n".join(lines)


def assert_robust(model: Any, dataset: Any, options: RobustOptions | None = None, *,
                  perturbations: str | Sequence[str], min_gamma_r: float | None = None,
                  min_gamma_a: float | None = None, rules: Sequence[str | Rule] = (), baseline: Any = None,
                  save: str | Path | None = None) -> Results:
    """Benchmark ``model`` on ``dataset`` under ``perturbations`` (as ``options`` say,
    :class:`RobustOptions`); raise RobustnessError naming what fell short of the bounds
    (min_gamma_r, min_gamma_a, rules) or regressed against ``baseline``. ``save``: write the
    results document there."""
    from ..bench.api import benchmark
    from ..bench.options import BenchOptions

    from ..bench.adapters.protocol import Classifier, Model

    o = options_object(options, RobustOptions, "assert_robust")
    is_classifier = isinstance(model, Classifier) or (isinstance(model, Model) and model.kind == "classifier")
    task = o.task or ("classify" if is_classifier else "retrieve")
    metric = o.metric or ("top1" if task == "classify" else "t2v.R@5")
    chosen = split_by_modality(perturbations)
    wanted = _rules(min_gamma_r, min_gamma_a, rules)
    if not wanted and baseline is None:
        raise ValueError("assert_robust needs a bound (min_gamma_r=, min_gamma_a=, rules=) or a baseline=")
    base = _baseline(baseline) if baseline is not None else None
    n_boot = o.bootstrap if o.bootstrap is not None else (200 if o.significance is not None else 0)
    doc = benchmark(model, _data(dataset, o.subset, o.seed or 0, task), BenchOptions(bootstrap=n_boot, task=task),
                    video=chosen["video"], text=chosen["text"], severities=o.severities, metric=metric)
    if save is not None:
        Path(save).parent.mkdir(parents=True, exist_ok=True)
        write_json(save, doc)
    results = validate(doc, "benchmark")
    outcomes = check(results, wanted) if wanted else not_run(results)     # a skipped one fails either way
    if base is not None:
        outcomes += compare(base, results, o.compare_metrics, o.max_drop, o.significance).outcomes
    failures = [o for o in outcomes if o.failed]
    if failures:
        raise RobustnessError(_message(model, failures), failures, results)
    return results
