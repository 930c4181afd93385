"""``perturb check``: evaluate rules against one results file."""
from __future__ import annotations

from typing import Iterable

from ..errors import GateInputError
from ..metric_names import Metric, parse_metric
from ..results import Results
from .outcome import FAIL, INFO, PASS, Outcome, fmt
from .rules import BOUNDS, Rule
from .scope import EACH, Scope, each_perturbation, resolve_scope, scope_value, select_runs


RATIO_CEILING = 10      # an mCE or rPC threshold above this was written in percent (the report's unit)


def _bind(results: Results, rule: Rule) -> tuple[Metric, Scope | None]:
    """Validate a rule's metric, scope and threshold against the results."""
    metric = parse_metric(rule.metric, results)
    if metric.is_fraction and not 0 <= rule.threshold <= 1:
        raise GateInputError(f"rule {rule.text!r}: {metric.key} is a fraction in [0, 1]; "
                             f"got threshold {rule.threshold:g} (did you mean {rule.threshold / 100:g}?)")
    if metric.is_figure and not metric.is_fraction and abs(rule.threshold) > RATIO_CEILING:
        raise GateInputError(f"rule {rule.text!r}: {metric.key} is a ratio written as a fraction (0.7638 for "
                             f"the report's 76.38%); got threshold {rule.threshold:g} "
                             f"(did you mean {rule.threshold / 100:g}?)")
    if metric.clean or metric.is_figure or metric.part:
        if rule.scope or rule.severity is not None:
            what = ("a part of the split" if metric.part else "a suite's figure" if metric.is_figure
                    else "a clean metric")
            raise GateInputError(f"rule {rule.text!r}: {what} takes no scope or severity; "
                                 f"write '{metric.name}={rule.threshold:g}'")
        return metric, None
    return metric, resolve_scope(results, rule.scope, rule.severity)


def _outcome(rule: Rule, value: float | None, ok: bool, message: str = "") -> Outcome:
    cells = {"rule": rule.text, "value": fmt(value), "threshold": f"{rule.threshold:g}",
             "verdict": PASS if ok else FAIL, "detail": message}
    return Outcome(rule.text, PASS if ok else FAIL, cells, message)


def _check_each(results: Results, rule: Rule, metric: Metric, severity: int | None) -> Outcome:
    scopes = [s for s in each_perturbation(results, severity) if select_runs(results, s)]
    values = {s.name: scope_value(results, s, metric) for s in scopes}
    if not values:
        return _outcome(rule, None, False, "no perturbation runs in the results")
    short = [k for k, v in values.items() if v is None or not rule.holds(v)]
    defined = {k: v for k, v in values.items() if v is not None}
    pick = min if rule.bound == "min" else max
    worst = pick(defined, key=defined.get) if defined else None
    value = defined.get(worst) if worst else None
    if short:
        listed = ", ".join(f"{k} ({fmt(values[k])})" for k in short)
        return _outcome(rule, value, False, f"{len(short)} of {len(values)} fall short: {listed}")
    missing = len(results.data.get("skipped") or [])
    more = f" ({missing} requested configuration(s) did not run)" if missing else ""
    return _outcome(rule, value, True, f"all {len(values)} perturbations that ran{more}; worst {worst}")


def check_rule(results: Results, rule: Rule) -> Outcome:
    """One rule → its Outcome; GateInputError for unknown names or metrics."""
    metric, scope = _bind(results, rule)
    if scope is not None and scope.kind == EACH:
        return _check_each(results, rule, metric, scope.severity)
    if scope is not None and not scope.present:
        return _outcome(rule, None, False, f"no runs of {scope.kind} {scope.name!r} in the results")
    value = scope_value(results, scope, metric)
    if value is None and metric.part:
        return _outcome(rule, None, False, part_missing(results, metric))
    if value is None:
        where = f" at severity {scope.severity}" if scope and scope.severity is not None else ""
        return _outcome(rule, None, False, f"{metric.name} is undefined or missing{where}")
    ok = rule.holds(value)
    why = "" if ok else f"{fmt(value)} is not {BOUNDS[rule.bound]} {rule.threshold:g}"
    return _outcome(rule, value, ok, why)


def part_missing(results: Results, metric: Metric) -> str:
    """Why a part of the split has no value for ``metric``: it is empty, or the figure is not computed."""
    split = results.data["split"]
    words = metric.part.replace("_", "-")
    if not split[metric.part]["configurations"]:
        given = split["trained_with"]["given"]
        names = ("names none of the ops run" if metric.part == "seen" else "names every op run")
        return f"the {words} part is empty: --trained-with {given} {names}"
    if metric.is_figure:
        return (f"the {words} part has no {metric.key}" + (": it needs --baseline-errors holding errors for "
                f"every op of the part" if "mCE" in metric.key else ""))
    return f"{metric.key} is undefined in the {words} part"


def not_run(results: Results) -> list[Outcome]:
    """One outcome per requested configuration that did not run: a failure, or information when the
    benchmark was told to accept it (--allow-skips)."""
    from ..honesty import run_label

    allowed = bool(results.data.get("skips_allowed"))
    out = []
    for s in results.data.get("skipped") or []:
        name = f"{s['modality']} {run_label(s)} ran"
        cells = {"rule": name, "value": "—", "threshold": "", "verdict": "allowed" if allowed else FAIL,
                 "detail": f"requested but did not run: {s['reason']}"}
        out.append(Outcome(name, INFO if allowed else FAIL, cells, cells["detail"]))
    return out


def notes(results: Results) -> list[str]:
    """What makes the numbers mean little (clean score near chance or 1, γ above 1, ...)."""
    from ..honesty import flags

    data = results.data
    found = data["flags"] if "flags" in data else flags(data)
    return [f["message"] for f in found if f["kind"] != "skipped"]     # skipped ones are outcomes


def check(results: Results, rules: Iterable[Rule]) -> list[Outcome]:
    """Every rule checked (all validated first, so bad input fails before any verdict), then one
    outcome per requested configuration that did not run."""
    rules = list(rules)
    if not rules:
        raise GateInputError("no rules to check; give --min/--max or a --policy file")
    for rule in rules:
        _bind(results, rule)
    return [check_rule(results, rule) for rule in rules] + not_run(results)
