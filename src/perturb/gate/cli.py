"""``perturb check`` and ``perturb compare``: exit 0 if every rule holds, 1 on a violation, 2 on bad input."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, Sequence

from ..errors import GateInputError, UsageError
from ..options import check_distinct_outputs, check_output
from .outcome import Outcome, exit_status

RULE_HELP = ("[SCOPE[@SEVERITY]:]METRIC=VALUE; SCOPE is a perturbation, category or modality "
             "(none: every perturbation), METRIC gamma_r, gamma_a, t2v.R@5, clean.t2v.R@5, ... (a "
             "classification file: top1, top5, top1_error, clean.top1, ...; an lmms-eval file: score, clean.score; "
             "a suite's figure: mCE, mPC, ...); "
             "or PART.METRIC=VALUE, PART seen or held_out (bench --trained-with), METRIC gamma_r, gamma_a, "
             "mPC, rPC, mCE, relative_mCE")


def _report(outcomes: list[Outcome], title: str, heading: str, suite: str, args: argparse.Namespace,
            notes: Sequence[str] = ()) -> int:
    from .junit import write_junit
    from .tables import markdown, print_table

    print_table(outcomes, title, notes)
    try:
        if args.junit:
            write_junit(outcomes, suite, args.junit)
        if args.markdown:
            Path(args.markdown).write_text(markdown(outcomes, heading, notes), encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot write report: {e}") from e
    return exit_status(outcomes)


def _inputs(args: argparse.Namespace) -> list[str]:
    """The files a check or compare reads (results, policy)."""
    return [p for p in (getattr(args, n, None) for n in ("results", "baseline", "current", "policy")) if p]


def _guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def func(args: argparse.Namespace) -> int:
        for option in ("--junit", "--markdown"):
            path = getattr(args, option[2:], None)
            if path:
                check_output(path, _inputs(args), option)
        check_distinct_outputs([(o, getattr(args, o[2:], None)) for o in ("--junit", "--markdown")])
        try:
            return run(args)
        except GateInputError as e:
            raise UsageError(str(e)) from e
    return func


def run_check(args: argparse.Namespace) -> int:
    """Check rules from --min/--max and --policy against one results file."""
    from .check import check, notes
    from ..results import load_results
    from .rules import load_policy, parse_rule

    rules = [parse_rule(s, "min") for s in args.min] + [parse_rule(s, "max") for s in args.max]
    if args.policy:
        rules = list(load_policy(args.policy).rules) + rules
    results = load_results(args.results)
    return _report(check(results, rules), f"perturb check {args.results}",
                   f"Robustness check of `{args.results}`", "perturb.check", args, notes(results))


def run_compare(args: argparse.Namespace) -> int:
    """Compare a current results file against a baseline."""
    from .compare import DEFAULT_MAX_DROP, compare
    from ..results import load_results
    from .rules import load_policy

    defaults = dict(load_policy(args.policy).compare) if args.policy else {}
    metrics = args.metric or defaults.get("metrics") or None
    metrics = [metrics] if isinstance(metrics, str) else metrics
    max_drop = args.max_drop if args.max_drop is not None else defaults.get("max_drop", DEFAULT_MAX_DROP)
    alpha = args.significance if args.significance is not None else defaults.get("significance")
    baseline, current = load_results(args.baseline), load_results(args.current)
    result = compare(baseline, current, metrics, max_drop, alpha)
    title = f"perturb compare {args.baseline} → {args.current}"
    heading = f"Robustness of `{args.current}` against `{args.baseline}`"
    return _report(result.outcomes, title, heading, "perturb.compare", args, result.notes)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``check`` and ``compare`` to the ``perturb`` command."""
    p = subparsers.add_parser(
        "check", help="fail (exit 1) when results break robustness rules",
        description="Check a results.json against rules. Exit 0: every rule holds; 1: a violation; "
                    "2: bad input (unreadable file, unknown metric, name or schema version).")
    p.add_argument("results", help="results.json written by `perturb bench`")
    p.add_argument("--min", action="append", default=[], metavar="RULE",
                   help=f"lower bound, repeatable: {RULE_HELP}")
    p.add_argument("--max", action="append", default=[], metavar="RULE",
                   help="upper bound, repeatable (for ranks: clean.t2v.MdR=5)")
    p.add_argument("--policy", metavar="FILE", help="YAML or TOML policy with min:/max: rules")
    _outputs(p)
    p.set_defaults(func=_guarded(run_check))

    p = subparsers.add_parser(
        "compare", help="fail (exit 1) when results regress against a baseline",
        description="Compare CURRENT against BASELINE per perturbation and category. A drop larger "
                    "than --max-drop is a regression; with --significance, only when it lies outside "
                    "the bootstrap noise. Files with different tasks, metrics or tie conventions are refused. "
                    "Exit 0: no regression; 1: regression; 2: bad input.")
    p.add_argument("baseline", help="baseline results.json (kept in the repository)")
    p.add_argument("current", help="results.json of the change under test")
    p.add_argument("--max-drop", type=float, default=None, metavar="X",
                   help="largest tolerated absolute drop of γ or of the metric (default 0.02)")
    p.add_argument("--significance", type=float, default=None, metavar="ALPHA",
                   help="flag a drop only if significant at ALPHA, from the bootstrap CIs (e.g. 0.05)")
    p.add_argument("--metric", action="append", default=None, metavar="M",
                   help="what to compare, repeatable: gamma_r, gamma_a, t2v.R@5, top1, top1_error, mCE, ... "
                        "(default: gamma_r and the results' own metric, clean and perturbed)")
    p.add_argument("--policy", metavar="FILE", help="policy file whose compare: section gives defaults")
    _outputs(p)
    p.set_defaults(func=_guarded(run_compare))


def _outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML, one test case per rule")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown summary (for a PR comment)")
