"""Subcommand ``perturb report``: combine results.json files (retrieval or classification) of several
models into one report."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import UsageError
from ..extras import require
from .scoring.baselines import baseline_help
from ..options import check_output


def register(subparsers: Any) -> None:
    """Add ``report`` to the ``perturb`` parser."""
    p = subparsers.add_parser("report", help="combine results.json files of several models into one report",
                              description="Write report.md, report.html and report.json (each file's clean scores, "
                                          "suite figures such as mCE and mPC, and corruption table, as data) "
                                          "into --out.")
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results.json files")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--baseline-errors", metavar="NAME_OR_JSON", help=baseline_help())
    p.add_argument("--allow-mixed", action="store_true",
                   help="combine results of different metrics or datasets (refused by default)")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """Combine results files into report.md / report.html."""
    from ..results import load_results
    from .reporting.report import print_summary, write_reports
    from .scoring.baselines import load_baseline
    from .scoring.held_out import with_baseline
    from .scoring.suite_summary import summarize_suites

    require(modules=["matplotlib"], why="to draw the report's figures")
    check_output(args.out, args.results, "--out", kind="dir")
    try:
        docs = [dict(load_results(p)) for p in args.results]     # validated, then extended below
        if args.baseline_errors is not None:
            baseline = load_baseline(args.baseline_errors)
            for path, doc in zip(args.results, docs):
                doc["suites"] = summarize_suites(doc, baseline)
                if "split" in doc:
                    doc["split"] = with_baseline(doc, baseline)
                if "imagenet-c" not in doc["suites"]:
                    print(f"note: {path}: no run is an ImageNet-C corruption under ImageNet-C's own table "
                          f"(e.g. gaussian_noise, fog:imagenet-c), so --baseline-errors gives it no mCE",
                          file=sys.stderr)
        if not args.allow_mixed:
            check_mixable(docs, [str(p) for p in args.results])
    except (OSError, ValueError) as e:
        raise UsageError(str(e)) from e
    paths = write_reports(docs, args.out)
    for doc in docs:
        print_summary(doc)
    print(f"wrote {paths['md']}, {paths['html']} and {paths['json']} (the figures, for scripts)")
    return 0


MIXABLE = (("metric", lambda d: d["metric"]),
           ("dataset", lambda d: {k: (d.get("dataset") or {}).get(k) for k in ("name", "n_items", "subset", "seed")}))


def check_mixable(docs: list[dict[str, Any]], paths: list[str]) -> None:
    """Results of different metrics or datasets are not one comparison: a ValueError naming both."""
    for what, key in MIXABLE:
        first = key(docs[0])
        for path, doc in zip(paths[1:], docs[1:]):
            if key(doc) != first:
                raise ValueError(f"{paths[0]} and {path} differ in {what} ({first} vs {key(doc)}); their "
                                 f"scores are not comparable in one report: pass --allow-mixed to combine "
                                 f"them anyway")
