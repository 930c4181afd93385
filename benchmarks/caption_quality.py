"""Quality of the text perturbations and contrast generators on MSR-VTT's test captions.

Reads the true captions of Park et al.'s released verb contrast sets (``msrvtt_*_contrast_set.tsv``,
2,554 rows each) from ``../shared/data/msrvtt-contrast-sets/`` (relative to the repository) or
``--data PATH``; skips with a message when they are absent. Writes
``benchmarks/results/caption_quality.json`` and ``.md``.

    python benchmarks/caption_quality.py [--data PATH] [--limit N] [--skip-text]
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "msrvtt-contrast-sets"
FILES = ("msrvtt_lm_contrast_set.tsv", "msrvtt_human_contrast_set.tsv")
OUT = REPO / "benchmarks" / "results"
CONTRAST_TYPES = ("verb", "action", "gender", "object", "attribute", "counting", "relation",
                  "event_order", "hallucination")


def load(data: Path) -> dict[str, list[Any]]:
    """{file name: MC rows} for both files (read with the project's TSV reader)."""
    from perturb.contrast.mc import read_mc_tsv
    return {name: read_mc_tsv(data / name) for name in FILES}


def human_edit(true: str, endings: list[str], label: int) -> tuple[str, set[int]]:
    """The crowd contrast of a row (the ending closest to the true caption) and its changed word indices."""
    words = true.split()
    best, best_ratio = "", -1.0
    for k, e in enumerate(endings):
        if k != label:
            r = difflib.SequenceMatcher(None, words, e.split()).ratio()
            if r > best_ratio:
                best, best_ratio = e, r
    changed: set[int] = set()
    for op, i1, i2, _, _ in difflib.SequenceMatcher(None, words, best.split()).get_opcodes():
        if op in ("replace", "delete"):
            changed.update(range(i1, i2))
    return best, changed


def word_indices(text: str, start: int, end: int) -> set[int]:
    """Indices of the whitespace words of ``text`` that overlap characters [start, end)."""
    out, pos = set(), 0
    for k, w in enumerate(text.split()):
        pos = text.index(w, pos)
        if pos < max(end, start + 1) and pos + len(w) > start:
            out.add(k)
        pos += len(w)
    return out


def text_perturbations(captions: list[str]) -> list[dict[str, Any]]:
    """Applicability, errors and apply_batch throughput of every text perturbation."""
    import perturb.text as text
    from perturb.registry import REGISTRY
    rows = []
    for spec in REGISTRY.select("text"):
        if spec.needs_model:
            rows.append({"perturbation": spec.name, "skipped": "needs a model"})
            continue
        errors, applied, t0 = 0, 0, time.perf_counter()
        try:
            out = text.apply_batch(captions, spec.name, seed=0)
            applied = sum(r.applied for r in out)
        except Exception as e:                                       # noqa: BLE001
            errors = 1
            out, applied = [], 0
            for c in captions:            # find how many captions fail one by one
                try:
                    applied += text.apply(c, spec.name, seed=0).applied
                except Exception:                                   # noqa: BLE001
                    errors += 1
            errors -= 1
            first_error = f"{type(e).__name__}: {e}"
        dt = time.perf_counter() - t0
        row = {"perturbation": spec.name, "applicable": applied / len(captions),
               "errors": errors, "captions_per_s": len(captions) / dt}
        if errors:
            row["first_error"] = first_error
        rows.append(row)
        print(f"  {spec.name:14s} applied {row['applicable']:.1%} errors {errors} "
              f"{row['captions_per_s']:.0f}/s", file=sys.stderr)
    return rows


def verb_quality(kind: str, captions: list[str], human: list[tuple[str, set[int]]],
                 contrasts: list[list[Any]]) -> dict[str, Any]:
    """Coverage, same token as the human edit, Penn tag kept, shared synset, for verb/action."""
    from perturb.contrast import lexicon
    from perturb.text import resources
    covered = same = tag_kept = synonym = 0
    examples = []
    for cap, (_, changed), found in zip(captions, human, contrasts):
        if not found:
            continue
        c = found[0]
        covered += 1
        ours = word_indices(cap, c.span.start, c.span.end)
        same += bool(ours & changed)
        old = resources.tagger()(cap)
        new = resources.tagger()(c.text)
        start = c.span.start
        t_old = next((t for t in old if t.idx == start), None)
        t_new = next((t for t in new if t.idx == start), None)
        kept = t_old is not None and t_new is not None and t_old.tag_ == t_new.tag_
        tag_kept += kept
        if t_old is not None and t_new is not None:
            lem_old = (resources.lemminflect().getLemma(t_old.lower_, upos="VERB") or (t_old.lemma_,))[0]
            lem_new = (resources.lemminflect().getLemma(t_new.lower_, upos="VERB") or (t_new.lemma_,))[0]
            synonym += lexicon.shares_synset(lem_old, lem_new, "v")
        if len(examples) < 15:
            examples.append({"true": cap, "ours": c.text, "rule": c.rule})
    n = len(captions)
    return {"type": kind, "rows": n, "covered": covered, "coverage": covered / n,
            "same_token": same / max(covered, 1), "tag_kept": tag_kept / max(covered, 1),
            "shared_synset": synonym / max(covered, 1), "examples": examples}


def gender_check(captions: list[str], contrasts: list[list[Any]]) -> dict[str, Any]:
    """On captions with a gendered word: that word changes, and only it, its article and same-gender pronouns."""
    from perturb.text import gender, resources
    docs = list(resources.nlp().pipe(captions, batch_size=256))
    with_word = covered = clean = 0
    bad = []
    for doc, found in zip(docs, contrasts):
        toks = gender.gendered_tokens(doc)
        if not toks:
            continue
        with_word += 1
        if not found:
            bad.append({"true": doc.text, "ours": None})
            continue
        covered += 1
        c = found[0]
        edits = c.edits or (c.span,)
        allowed = {t.i: t for t in toks}
        changed = [t for t in doc for e in edits
                   if t.idx < max(e.end, e.start + 1) and t.idx + len(t.text) > e.start]
        nouns = [t for t in changed if t.i in allowed and allowed[t.i].kind == "noun"]
        genders = {allowed[t.i].gender for t in changed if t.i in allowed}
        ok = bool(len(nouns) <= 1 and len(genders) == 1
              and all(t.i in allowed or t.lower_ in ("a", "an") for t in changed)
              and (nouns or all(allowed[t.i].kind == "pronoun" for t in changed if t.i in allowed)))
        clean += bool(ok)
        if not ok and len(bad) < 10:
            bad.append({"true": doc.text, "ours": c.text})
    return {"rows": len(captions), "with_gendered_word": with_word, "covered": covered,
            "coverage_of_gendered": covered / max(with_word, 1), "only_that_word_changed": clean,
            "violations": covered - clean, "examples_of_failures": bad[:10]}


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown tables."""
    lines = [f"# Caption quality on MSR-VTT test captions ({report['captions']} distinct true captions "
             f"of the two files, {report['rows_per_file']} rows each)", ""]
    if report.get("text"):
        lines += ["## Text perturbations (apply_batch, seed 0)", "",
                  "| perturbation | applicable | errors | captions/s |", "|---|---:|---:|---:|"]
        for r in report["text"]:
            if "skipped" in r:
                lines.append(f"| {r['perturbation']} | skipped ({r['skipped']}) | | |")
            else:
                lines.append(f"| {r['perturbation']} | {r['applicable']:.1%} | {r['errors']} | "
                             f"{r['captions_per_s']:.0f} |")
        lines.append("")
    lines += ["## Contrast generators (no language model; corpus = the true captions)", "",
              "| type | coverage (all) | LM-file rows | human-file rows | captions/s |",
              "|---|---:|---:|---:|---:|"]
    for r in report["coverage"]:
        lines.append(f"| {r['type']} | {r['coverage']:.1%} | {r[FILES[0]]:.1%} | {r[FILES[1]]:.1%} | "
                     f"{r['captions_per_s']:.0f} |")
    lines += ["", "## Verb and action contrasts vs the released contrasts (human file = crowd edits)", "",
              "| type | reference | coverage | same token as reference edit | Penn tag kept | shared synset |",
              "|---|---|---:|---:|---:|---:|"]
    for r in report["verb_quality"]:
        lines.append(f"| {r['type']} | {r['reference']} | {r['coverage']:.1%} | {r['same_token']:.1%} | "
                     f"{r['tag_kept']:.1%} | {r['shared_synset']:.1%} |")
    g = report["gender"]
    lines += ["", "## Gender contrasts", "",
              f"- captions with a gendered word: {g['with_gendered_word']} of {g['rows']}",
              f"- covered: {g['covered']} ({g['coverage_of_gendered']:.1%} of those)",
              f"- only the gendered word (with its article and same-gender pronouns) changed: "
              f"{g['only_that_word_changed']} of {g['covered']} (violations: {g['violations']})", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=None, help="first N rows only (quick runs)")
    ap.add_argument("--skip-text", action="store_true", help="skip the text perturbations")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if not all((args.data / f).is_file() for f in FILES):
        print(f"skipped: the MSR-VTT contrast sets are not in {args.data} "
              f"(expected {', '.join(FILES)})")
        return 0
    sys.path.insert(0, str(REPO / "src"))
    from perturb.contrast import generate_batch, lexicon
    sets = load(args.data)
    if args.limit:
        sets = {k: v[:args.limit] for k, v in sets.items()}
    trues = {name: [r.endings[r.label] for r in rows] for name, rows in sets.items()}
    unique = list(dict.fromkeys(trues[FILES[0]] + trues[FILES[1]]))
    report: dict[str, Any] = {"data": str(args.data), "rows_per_file": len(trues[FILES[0]]),
                              "captions": len(unique)}
    if not args.skip_text:
        print(f"text perturbations on {len(unique)} distinct true captions:", file=sys.stderr)
        report["text"] = text_perturbations(unique)
    freq = lexicon.Frequencies.from_captions(unique)
    report["coverage"], found = [], {}
    for kind in CONTRAST_TYPES:
        t0 = time.perf_counter()
        out = generate_batch(unique, kind, seed=0, n=1, frequencies=freq)
        dt = time.perf_counter() - t0
        found[kind] = dict(zip(unique, out))
        row = {"type": kind, "captions_per_s": len(unique) / dt}
        for name in FILES:
            row[name] = sum(bool(found[kind][c]) for c in trues[name]) / len(trues[name])
        row["coverage"] = sum(bool(f) for f in out) / len(unique)
        report["coverage"].append(row)
        print(f"  {kind:14s} coverage {row['coverage']:.1%} ({row['captions_per_s']:.0f}/s)",
              file=sys.stderr)
    report["verb_quality"] = []
    for name in FILES:
        rows = sets[name]
        ref = [human_edit(r.endings[r.label], r.endings, r.label) for r in rows]
        for kind in ("verb", "action"):
            q = verb_quality(kind, trues[name], ref, [found[kind][c] for c in trues[name]])
            q["reference"] = "human" if "human" in name else "lm"
            report["verb_quality"].append(q)
    report["gender"] = gender_check(unique, [found["gender"][c] for c in unique])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "caption_quality.json").write_text(json.dumps(report, indent=1) + "\n")
    md = markdown(report)
    (args.out / "caption_quality.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
