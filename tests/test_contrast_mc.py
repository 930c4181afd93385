"""MC sets: layout, one true caption per row, distinct endings, balanced labels, round-trips."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from perturb.contrast import mc
from perturb.contrast.entailment import entailment_set, write_entailment
from perturb.contrast.types import Contrast, Span

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "msrvtt-contrast-sets"


def items(n: int) -> list[tuple[str, str]]:
    return [(f"video{k}", f"caption number {k} of a person doing thing {k % 7}") for k in range(n)]


def fake_contrast(caption: str) -> Contrast:
    start = caption.index("person")
    return Contrast(caption.replace("person", "robot", 1), "object",
                    Span(start, start + 6, "person", "robot"), "object:test", "", caption)


def check_rows(rows: list[mc.MCRow], truth: dict[str, str]) -> None:
    for r in rows:
        assert len(r.endings) == 5 and 0 <= r.label < 5
        assert r.endings[r.label] == truth[r.clip]
        assert sum(e == truth[r.clip] for e in r.endings) == 1
        assert len(set(r.endings)) == 5


def test_random_mc_rows_and_uniform_labels():
    its = items(1000)
    result = mc.random_mc(its, seed=3)
    assert len(result.rows) == 1000 and result.filtered == 0
    check_rows(result.rows, dict(its))
    counts = Counter(r.label for r in result.rows)
    assert set(counts) == set(range(5))
    assert all(abs(c / 1000 - 0.2) <= 0.05 for c in counts.values())
    assert [r.kinds.count("random") for r in result.rows] == [4] * 1000
    assert mc.random_mc(its, seed=3).rows == result.rows
    assert mc.random_mc(its, seed=4).rows != result.rows


def test_random_mc_groups():
    its = [(f"c{k}", f"caption {k}", "movieA" if k % 2 else "movieB") for k in range(40)]
    result = mc.random_mc(its, seed=0)
    group = {c: g for c, _, g in its}
    by_caption = {cap: group[c] for c, cap, _ in its}
    for r in result.rows:
        assert {by_caption[e] for e in r.endings} == {group[r.clip]}
    with pytest.raises(ValueError, match="not enough"):
        mc.random_mc([("a", "x", "g"), ("b", "y", "g"), ("c", "z", "h")], seed=0)


def test_contrast_mc_replaces_one_negative_and_filters():
    its = items(300) + [("videoX", "no contrast possible here")]
    contrasts = [fake_contrast(c) for _, c in its[:-1]] + [None]
    result = mc.contrast_mc(its, "object", seed=1, contrasts=contrasts)
    assert result.filtered == 1 and result.filtered_clips == ["videoX"]
    assert len(result.rows) == 300
    check_rows(result.rows, dict(its))
    for r in result.rows:
        assert r.kinds.count("object") == 1 and r.kinds.count("true") == 1
        k = r.kinds.index("object")
        assert r.endings[k] == r.endings[r.label].replace("person", "robot", 1)
        assert r.contrast["span"]["replacement"] == "robot"


def test_contrast_mc_with_a_real_generator():
    its = [("v1", "Two men are doing wrestling."), ("v2", "A woman is pushing her stroller."),
           ("v3", "A cat sleeps on a sofa."), ("v4", "A dog runs in the park."),
           ("v5", "Birds fly over a lake."), ("v6", "A boy plays the guitar.")]
    result = mc.contrast_mc(its, "gender", seed=0)
    assert result.filtered == 3
    assert {r.clip for r in result.rows} == {"v1", "v2", "v6"}
    row = next(r for r in result.rows if r.clip == "v1")
    assert "Two women are doing wrestling." in row.endings


def test_tsv_and_jsonl_round_trip(tmp_path):
    its = items(50)
    rows = mc.contrast_mc(its, "object", seed=2, contrasts=[fake_contrast(c) for _, c in its]).rows
    rows[0].endings[1 if rows[0].label != 1 else 2] = 'a "quoted" caption, with comma'
    path = mc.write_mc_tsv(rows, tmp_path / "mc.tsv")
    header = path.read_text().splitlines()[0]
    assert header == "clip\tending0\tending1\tending2\tending3\tending4\tlabel"
    back = mc.read_mc_tsv(path)
    assert [(r.clip, r.endings, r.label) for r in back] == [(r.clip, r.endings, r.label) for r in rows]
    back_json = mc.read_mc_jsonl(mc.write_mc_jsonl(rows, tmp_path / "mc.jsonl"))
    assert [r.to_dict() for r in back_json] == [r.to_dict() for r in rows]


def test_reader_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("clip\tending0\nx\ty\n")
    with pytest.raises(ValueError, match="header"):
        mc.read_mc_tsv(bad)
    bad.write_text("\t".join(mc.TSV_COLUMNS) + "\nv\ta\tb\tc\td\te\t7\n")
    with pytest.raises(ValueError, match="out of range"):
        mc.read_mc_tsv(bad)


@pytest.mark.skipif(not DATA.is_dir(), reason=f"MSR-VTT contrast sets not found in {DATA}")
def test_reader_reads_the_published_files(tmp_path):
    for name in ("msrvtt_lm_contrast_set.tsv", "msrvtt_human_contrast_set.tsv"):
        rows = mc.read_mc_tsv(DATA / name)
        assert len(rows) == 2554
        again = mc.read_mc_tsv(mc.write_mc_tsv(rows, tmp_path / name))
        assert [(r.clip, r.endings, r.label) for r in again] == [(r.clip, r.endings, r.label) for r in rows]


def test_entailment_set(tmp_path):
    its = [("v1", "Two men are doing wrestling."), ("v2", "A cat sleeps.")]
    pairs = entailment_set(its, "gender", seed=0)
    assert [(p.video, p.caption, p.label, p.type) for p in pairs] == [
        ("v1", "Two men are doing wrestling.", 1, ""),
        ("v1", "Two women are doing wrestling.", 0, "gender"),
        ("v2", "A cat sleeps.", 1, "")]
    text = write_entailment(pairs, tmp_path / "e.tsv").read_text().splitlines()
    assert text[0] == "video\tcaption\tlabel\ttype" and text[2] == "v1\tTwo women are doing wrestling.\t0\tgender"


def test_dataset_items_make_mc_entries_and_a_set_writes_directly(tmp_path):
    from perturb.dataset.items import Item
    its = [Item(f"v{k}", f"v{k}", f"v{k}.mp4", (f"caption {k} of a thing", f"second caption {k}"),
                group="g" if k < 6 else None) for k in range(8)]
    its.append(Item("empty", "empty", "empty.mp4", ()))
    entries = mc.entries(its)
    assert [(e.clip, e.caption, e.group) for e in entries[:2]] == [("v0", "caption 0 of a thing", "g"),
                                                                  ("v1", "caption 1 of a thing", "g")]
    assert len(entries) == 8                                # the item without captions is left out
    result = mc.random_mc(its, seed=0)
    assert len(result) == 8 and list(result) == result.rows
    check_rows(result.rows, {e.clip: e.caption for e in entries})
    back = mc.read_mc_tsv(mc.write_mc_tsv(result, tmp_path / "mc.tsv"))
    assert [(r.clip, r.endings, r.label) for r in back] == [(r.clip, r.endings, r.label) for r in result.rows]
    assert [r.to_dict() for r in mc.read_mc_jsonl(mc.write_mc_jsonl(result, tmp_path / "mc.jsonl"))] \
        == [r.to_dict() for r in result.rows]
