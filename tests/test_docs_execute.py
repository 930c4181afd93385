"""Every command and snippet of README.md, docs/*.md and examples/ runs as written.

Each documentation file is one test. Its blocks run in order in a fresh folder that holds small
versions of everything the docs point at (_write_sandbox below), so relative paths resolve:

- ``python`` blocks are executed in one namespace per file (a later block sees an earlier block's
  names, as in a reader's session); functions named ``test_*`` that a block defines are then called,
  as pytest would;
- ``bash``/``sh``/``shell`` blocks run command by command: ``perturb ...`` through the CLI's
  ``main`` in this process (the same code as the console script, without a new interpreter per
  command), anything else through ``bash -c`` with this interpreter first on PATH. A command must
  exit 0, or N when its comment says ``exits N``;
- an example script's usage lines (indented ``python ...`` lines of its docstring) are commands too.

Documented substitutions, the only differences from the text as written (HUB_MODELS, SUBSTITUTIONS,
IN_PROCESS_BUILD, NARROW, each with its reason): hub checkpoints become tiny local checkpoints of the
same family (tests/hf_models.py; the hub cannot be reached here), ``--device cuda`` becomes
``--device cpu`` on a machine without CUDA, the absolute dataset roots ``/data/`` and ``/shared/``
become folders of the sandbox, ``perturb build`` runs with ``--jobs 1``, and a few benchmark
commands run one video perturbation at one severity (never fewer text perturbations, nor anything
else that decides the exit status). Nothing else is stubbed.

Blocks that are not meant to run are marked in the Markdown: a data info string (```text for
synopses and output listings, ```json, ```yaml ...) or ``<!-- no-run: REASON -->`` (a reason is
required) on the last non-blank line before the fence.
test_every_block_is_run_or_marked fails on a block that is neither, so a new block is executed
(or its exemption is written down) automatically. A failure names the file, the line and the command.
examples/ci/robustness.yml is run step by step by tests/test_gate_workflow.py.
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

from doc_blocks import DATA, PYTHON, SHELL, Block, Command, example_blocks, markdown_blocks

REPO = Path(__file__).resolve().parents[1]
MARKDOWN = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "examples").rglob("*.md")])
EXAMPLES = sorted((REPO / "examples").rglob("*.py"))

# Hub checkpoints named in the docs -> the tests/hf_models.py family that stands in for them.
HUB_MODELS = {
    "openai/clip-vit-base-patch32": "clip",
    "google/siglip-base-patch16-224": "siglip",
    "google/siglip2-base-patch16-naflex": "siglip2",
    "microsoft/xclip-base-patch32": "xclip",
    "Salesforce/blip-itm-base-coco": "blip",
    "Salesforce/blip2-itm-vit-g": "blip2",
    "Qwen/Qwen2-VL-2B-Instruct": "qwen2_vl",
    "Qwen/Qwen2.5-VL-3B-Instruct": "qwen2_5_vl",
    "llava-hf/LLaVA-NeXT-Video-7B-hf": "llava_next_video",
    "llava-hf/llava-onevision-qwen2-0.5b-ov-hf": "llava_onevision",
    "LanguageBind/Video-LLaVA-7B-hf": "video_llava",
    "google/vit-base-patch16-224": "vit",
    "facebook/deit-base-distilled-patch16-224": "deit",
    "microsoft/beit-base-patch16-224": "beit",
    "microsoft/swin-tiny-patch4-window7-224": "swin",
    "facebook/convnext-tiny-224": "convnext",
    "microsoft/resnet-50": "resnet",
    "MCG-NJU/videomae-base-finetuned-kinetics": "videomae",
    "facebook/timesformer-base-finetuned-k400": "timesformer",
    "google/vivit-b-16x2-kinetics400": "vivit",
}
# (pattern, replacement): absolute dataset roots of the docs live in the sandbox; without CUDA
# (CPU_ONLY, applied only then) the GPU recipes run on the CPU.
CPU_ONLY = (
    (r"--device cuda\b", "--device cpu"),
    (r"--perturb-device cuda\b", "--perturb-device cpu"),
)
SUBSTITUTIONS = (
    (r"(?<![\w.])/data/", "data/"),
    (r"(?<![\w.])/shared/", "shared/"),
)
# (file, command pattern): appended to matching commands (argparse keeps an option's last value), so
# they run one video perturbation at one severity. The ready commands of docs/models.md differ from
# one another only in the model and its options; the demo data's full benchmark over 40 videos is
# `make demo` (two minutes); the GPU recipe decodes at 224 px, where the full video loop takes a
# minute on 2 cores. Every video perturbation at every severity runs in README.md's `perturb bench`
# command. A narrowing cuts video operations and severities only (NARROWABLE): the text selection,
# the bootstrap and everything else that decides a command's exit status run as documented.
ONE_CONFIGURATION = "--video-perturbations gaussian_noise --severities 1"
NARROWABLE = {"--video-perturbations", "--severities"}
NARROW = {("docs/models.md", r"^perturb bench "): ONE_CONFIGURATION,
          ("docs/benchmark.md", r"^perturb bench .*--dataset demo-out/"): ONE_CONFIGURATION,
          ("docs/benchmark.md", r"^perturb bench .*--size 224"): ONE_CONFIGURATION}
# `perturb build` runs with `--jobs 1` (in this process): its files are byte-identical whatever the
# worker count (tests/test_dataset_build.py), and each new worker process would load spaCy, WordNet
# and MiniLM again, which costs more than the tiny builds themselves on 2 cores.
IN_PROCESS_BUILD = "--jobs 1"
HUB_NAME = re.compile(r"\b(?:hf|clip):([A-Za-z0-9][\w.-]*/[\w.-]+)")    # after substitution: unknown ones
TAIL = 3000                                     # characters of output shown with a failure


def doc_blocks() -> dict[str, list[Block]]:
    """Every documentation file (relative path) -> its blocks."""
    found = {str(p.relative_to(REPO)): markdown_blocks(p.relative_to(REPO), p.read_text(encoding="utf-8"))
             for p in MARKDOWN}
    found.update({str(p.relative_to(REPO)): example_blocks(p, REPO) for p in EXAMPLES})
    return found


BLOCKS = doc_blocks()


# ---------------------------------------------------------------------------------------- sandbox

def _write_sandbox(root: Path) -> None:
    """Small versions of every path the docs name, relative to the folder commands run in."""
    if str(REPO) not in sys.path:                       # tests/datasets.py, not a `datasets` package
        sys.path.insert(0, str(REPO))
    from tests import datasets                          # small real encoded videos in each reader's layout

    from perturb.demo.data import write_dataset
    from perturb.contrast import mc
    from perturb.dataset import read_dataset

    msrvtt = datasets.msrvtt_dataset(root / "data" / "msrvtt", n=2, frames=4)
    datasets.youcook2_dataset(root / "data" / "youcook2", n=2, seconds=2.0)
    datasets.write_video(root / "in.mp4", frames=12)
    datasets.generic_dataset(root, n=6, frames=4)                    # captions.csv + videos/
    datasets.generic_dataset(root, n=6, frames=4, jsonl=True)        # captions.jsonl
    (root / "contrast").mkdir()
    pool = [(f"other{k}", c) for k, c in enumerate(datasets.CAPTIONS)]      # negatives for 2 videos
    rows = [r for r in mc.random_mc([*read_dataset(msrvtt), *pool], seed=0) if not r.clip.startswith("other")]
    mc.write_mc_tsv(rows, root / "contrast" / "mc.tsv")
    shutil.copytree(REPO / "examples", root / "examples")             # a copy: scripts may write there
    (root / "shared").mkdir()
    write_dataset(root / "demo-out" / "data")                        # what `make demo` leaves there


@pytest.fixture(scope="session")
def sandbox_template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs-sandbox")
    _write_sandbox(root)
    return root


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """family -> folder of a tiny checkpoint, built the first time a doc asks for it."""
    import hf_models

    root = tmp_path_factory.mktemp("docs-models")
    built: dict[str, Path] = {}

    def get(family: str) -> Path:
        if family not in built:
            built[family] = hf_models.BUILDERS[family](root / family)
        return built[family]
    return get


@functools.lru_cache(maxsize=None)
def _has_cuda() -> bool:
    import torch
    return torch.cuda.is_available()


def substitute(text: str, models, doc: str = "") -> str:
    """The documented substitutions (module docstring), applied to a command or a snippet of ``doc``."""
    if text.startswith("perturb build ") and "--backend" not in text:
        text = re.sub(r"--jobs \d+", IN_PROCESS_BUILD, text)
        text = text if IN_PROCESS_BUILD in text else f"{text} {IN_PROCESS_BUILD}"
    for (where, pattern), extra in NARROW.items():
        if doc == where and re.search(pattern, text):
            text = f"{text} {extra}"
    for name, family in HUB_MODELS.items():
        if name in text:
            text = text.replace(name, str(models(family)))
    for pattern, replacement in SUBSTITUTIONS + (() if _has_cuda() else CPU_ONLY):
        text = re.sub(pattern, replacement, text)
    return text


# ---------------------------------------------------------------------------------------- running

class DocFailure(AssertionError):
    pass


def _fail(block: Block, line: int, what: str, detail: str) -> DocFailure:
    return DocFailure(f"{block.where(line)}: {what}\n{detail[-TAIL:]}")


def _known_models_only(block: Block, line: int, text: str) -> str:
    unknown = sorted(set(HUB_NAME.findall(text)))
    if unknown:
        raise _fail(block, line, f"no tiny stand-in for {', '.join(unknown)}: add it to HUB_MODELS in "
                                 "tests/test_docs_execute.py", "")
    return text


def run_python(block: Block, code: str, namespace: dict) -> None:
    before = set(namespace)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile("\n" * block.line + code, str(block.path), "exec"), namespace)   # file's line numbers
            for name in sorted(set(namespace) - before):
                if name.startswith("test_") and callable(namespace[name]):
                    namespace[name]()
    except Exception:
        error = traceback.format_exc()
        raise _fail(block, block.line, "python block failed", out.getvalue() + error) from None


def run_command(block: Block, command: Command, text: str, cwd: Path) -> None:
    argv = shlex.split(text)
    if argv[0] == "perturb":
        from perturb.cli import main
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = main(argv[1:])
        except SystemExit as e:                          # argparse usage errors
            code = e.code if isinstance(e.code, int) else 2
        except Exception:
            raise _fail(block, command.line, f"`{command.text}` raised", out.getvalue()
                        + traceback.format_exc()) from None
        output = out.getvalue()
    else:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
        done = subprocess.run(["bash", "-c", text], cwd=cwd, env=env, capture_output=True, text=True)
        code, output = done.returncode, done.stdout + done.stderr
    if code != command.expect:
        raise _fail(block, command.line, f"`{command.text}` exited {code} (expected {command.expect})", output)


def run_file(blocks: list[Block], cwd: Path, models) -> int:
    """Run a file's runnable blocks in order, printing each one's time; returns how many ran."""
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for block in blocks:
        if not block.runnable:
            continue
        if block.lang in PYTHON:
            start = time.perf_counter()
            run_python(block, _known_models_only(block, block.line, substitute(block.code, models)), namespace)
            print(f"{time.perf_counter() - start:6.1f} s  {block.where()}  python block")
        else:
            for command in block.commands:
                start = time.perf_counter()
                text = substitute(command.text, models, str(block.path))
                run_command(block, command, _known_models_only(block, command.line, text), cwd)
                print(f"{time.perf_counter() - start:6.1f} s  {block.where(command.line)}  {command.text[:80]}")
        ran += 1
    return ran


# ------------------------------------------------------------------------------------------ tests

RUNNABLE = sorted(name for name, blocks in BLOCKS.items() if any(b.runnable for b in blocks))


@pytest.mark.parametrize("doc", RUNNABLE)
def test_doc_runs_as_written(doc, sandbox_template, tiny_models, tmp_path, monkeypatch):
    cwd = tmp_path / "work"
    shutil.copytree(sandbox_template, cwd, symlinks=True)
    monkeypatch.chdir(cwd)
    blocks = BLOCKS[doc]
    assert run_file(blocks, cwd, tiny_models) == sum(b.runnable for b in blocks)


def test_the_many_gpus_plan_is_what_its_command_prints(sandbox_template, tiny_models, tmp_path, monkeypatch, capsys):
    """docs/benchmark.md's dry-run listing is what the commands above it print, run as written (the hub
    checkpoint aside, and no CPU substitution: ``--gpus`` previews GPUs anywhere) on a machine named node1."""
    from perturb.bench.distributed import placement
    from perturb.cli import main

    blocks = BLOCKS["docs/benchmark.md"]
    at = next(k for k, b in enumerate(blocks) if b.lang == "text" and b.code.startswith("perturb bench --dry-run:"))
    *setup, command = blocks[at - 1].commands
    cwd = tmp_path / "work"
    shutil.copytree(sandbox_template, cwd, symlinks=True)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(placement, "this_host", lambda: "node1")
    for step in setup:
        run_command(blocks[at - 1], step, step.text, cwd)
    model = next(name for name in HUB_MODELS if name in command.text)
    local = str(tiny_models(HUB_MODELS[model]))
    capsys.readouterr()
    assert main(shlex.split(command.text.replace(model, local))[1:]) == 0
    printed = capsys.readouterr().out.replace(local, model)
    assert printed.splitlines() == blocks[at].code.rstrip("\n").splitlines()


def test_every_block_is_run_or_marked():
    problems = []
    for blocks in BLOCKS.values():
        for b in blocks:
            if b.lang not in PYTHON + SHELL + DATA:
                problems.append(f"{b.where()}: info string {b.lang!r}: use one of "
                                f"{', '.join(PYTHON + SHELL)} (run) or {', '.join(DATA)} (not run)")
            elif b.lang in SHELL and b.skip is None and not b.commands:
                problems.append(f"{b.where()}: a shell block without a command")
    for path in EXAMPLES:                                 # a new example script documents how to run it
        if not BLOCKS[str(path.relative_to(REPO))]:
            problems.append(f"{path.relative_to(REPO)}: no usage line (an indented `python ...` line in its docstring)")
    assert problems == [], "\n".join(problems)


def test_docs_hold_runnable_blocks():
    """The collection itself works: the files are found and most blocks run."""
    assert {"README.md", "docs/ci.md", "docs/building.md", "examples/perturb_clip_and_caption.py"} <= set(RUNNABLE)
    skipped = [f"{b.where()}: {b.skip}" for blocks in BLOCKS.values() for b in blocks if b.skip]
    runnable = [b for blocks in BLOCKS.values() for b in blocks if b.runnable]
    assert len(runnable) > 3 * len(skipped), skipped


# ------------------------------------------------------------------- the collection rules themselves

SAMPLE = """\
# Title

```bash
perturb list --modality video   # the video ones
perturb bench --model hf:a/b#itm --out o
perturb check r.json \\
    --min gamma_r=0.8           # exits 1
```

<!-- no-run: needs a cluster -->

```sh
dask scheduler --port 8786
```

```text
perturb bench --model SPEC [--out DIR]
```

- a list item:

  ```python
  def f():
      return 1
  ```

```
unlabelled
```
"""


def test_collection_rules():
    blocks = markdown_blocks(Path("doc.md"), SAMPLE)
    assert [(b.line, b.lang, b.runnable, b.skip) for b in blocks] == [
        (3, "bash", True, None), (12, "sh", False, "needs a cluster"), (16, "text", False, None),
        (22, "python", True, None), (27, "", False, None)]
    assert blocks[0].commands == (Command("perturb list --modality video", 4, 0),
                                  Command("perturb bench --model hf:a/b#itm --out o", 5, 0),
                                  Command("perturb check r.json --min gamma_r=0.8", 6, 1))
    assert blocks[3].code == "def f():\n    return 1\n"
    with pytest.raises(ValueError, match=r"^doc.md:2: No closing quotation: perturb text 'open"):
        markdown_blocks(Path("doc.md"), "```bash\nperturb text 'open\n```\n")
    assert blocks[0].where(5) == "doc.md:5"
    assert substitute("perturb bench --model m", None, "docs/models.md").endswith("gaussian_noise --severities 1")
    assert substitute("perturb bench --model m", None, "README.md") == "perturb bench --model m"


def test_a_narrowing_cuts_video_operations_or_severities_only():
    """What decides a documented command's exit status (text perturbations that cannot run, say) is
    never narrowed away: a narrowing names only video operations and severities."""
    for (doc, pattern), extra in NARROW.items():
        options = {word for word in shlex.split(extra) if word.startswith("--")}
        assert options <= NARROWABLE, f"{doc} {pattern}: {sorted(options - NARROWABLE)}"


def test_a_documented_exit_status_is_checked(tmp_path, monkeypatch):
    """A command that exits other than its comment says fails the docs test, both ways."""
    monkeypatch.chdir(tmp_path)
    for text, expect in (("perturb describe no_such_op", 0), ("perturb list --modality text  # exits 2", 2)):
        block = markdown_blocks(Path("docs/z.md"), f"```bash\n{text}\n```\n")[0]
        with pytest.raises(DocFailure, match=rf"exited {2 if expect == 0 else 0} \(expected {expect}\)"):
            run_file([block], tmp_path, None)


def test_substitutions(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "_has_cuda", lambda: False)
    fake = {"clip": Path("/m/clip")}
    text = substitute("perturb bench --model hf:openai/clip-vit-base-patch32#embed --dataset /data/msrvtt "
                      "--out /shared/x --device cuda --perturb-device cuda", fake.__getitem__)
    assert text == ("perturb bench --model hf:/m/clip#embed --dataset data/msrvtt --out shared/x "
                    "--device cpu --perturb-device cpu")
    assert substitute("read('a/data/b')", fake.__getitem__) == "read('a/data/b')"
    assert substitute("perturb build d --out o --jobs 4 --format npy", None) == "perturb build d --out o --jobs 1 --format npy"
    assert substitute("perturb build d --out o", None) == "perturb build d --out o --jobs 1"
    assert substitute("perturb build d --backend dask --jobs 4", None) == "perturb build d --backend dask --jobs 4"


def test_a_failure_names_file_line_and_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    block = markdown_blocks(Path("docs/x.md"), "text\n\n```bash\nperturb list\nperturb describe no_such_op\n```\n")[0]
    with pytest.raises(DocFailure) as e:
        run_file([block], tmp_path, None)
    first = str(e.value).splitlines()[0]
    assert first == "docs/x.md:5: `perturb describe no_such_op` exited 2 (expected 0)"
    hub = markdown_blocks(Path("docs/y.md"), "```bash\nperturb bench --model hf:someone/unknown-model\n```\n")[0]
    with pytest.raises(DocFailure, match="^docs/y.md:2: no tiny stand-in for someone/unknown-model"):
        run_file([hub], tmp_path, None)
    py = markdown_blocks(Path("README.md"), "```python\ny = undefined_name\n```\n")[0]
    with pytest.raises(DocFailure, match=r'(?s)^README.md:1: python block failed.*File "README.md", line 2.*NameError'):
        run_file([py], tmp_path, None)


# ------------------------------------------------------------------- docs that list what the code has

def _subcommand_options(name: str) -> set[str]:
    from perturb.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[name]
    return {opt for action in sub._actions for opt in action.option_strings if opt.startswith("--")} - {"--help"}


def test_bench_synopsis_lists_every_option():
    synopsis = next(b.code for b in BLOCKS["docs/benchmark.md"] if b.lang == "text" and b.code.startswith("perturb bench"))
    missing = sorted(opt for opt in _subcommand_options("bench") if not re.search(rf"{opt}\b(?!-)", synopsis))
    assert missing == [], f"docs/benchmark.md's synopsis misses {', '.join(missing)}"


def test_every_hf_family_is_documented_and_its_command_runs():
    from perturb.bench.adapters.hf import FAMILIES
    models_md = (REPO / "docs" / "models.md").read_text(encoding="utf-8")
    assert [f.cls for f in FAMILIES if f"`{f.cls}`" not in models_md] == []
    assert set(HUB_MODELS.values()) == {f.name for f in FAMILIES}          # a tiny stand-in per family
    commands = " ".join(c.text for b in BLOCKS["docs/models.md"] if b.runnable for c in b.commands)
    classifiers = {f.name for f in FAMILIES if f.modes == ("classify",)}     # their commands need labelled data
    assert [name for name, family in HUB_MODELS.items()
            if f"hf:{name}" not in commands and family not in classifiers] == []
    listed = " ".join(b.code for b in BLOCKS["docs/models.md"])
    assert [name for name, family in HUB_MODELS.items() if family in classifiers and f"hf:{name}" not in listed] == []


def test_benchmark_md_adapter_table_names_every_hf_family():
    from perturb.bench.adapters.hf import FAMILIES
    row = next(ln for ln in (REPO / "docs" / "benchmark.md").read_text(encoding="utf-8").splitlines()
               if ln.startswith("| `hf:"))
    named = {re.sub(r"[^a-z0-9]", "", n.lower()) for n in re.search(r"\(([^)]*)\)", row).group(1).split(",")}
    assert sorted(f.name for f in FAMILIES if f.name.replace("_", "") not in named) == []


def test_benchmark_md_names_every_model_kind():
    from perturb.bench.adapters.kinds import KINDS
    text = (REPO / "docs" / "benchmark.md").read_text(encoding="utf-8")
    synopsis = next(b.code for b in BLOCKS["docs/benchmark.md"] if b.lang == "text" and b.code.startswith("perturb bench"))
    table = [ln for ln in text.splitlines() if ln.startswith("| `")]
    assert [k.form for k in KINDS.values() if not any(ln.startswith(f"| `{k.form}`") for ln in table)] == []
    assert [k.form for k in KINDS.values() if k.form not in synopsis] == []


def test_policy_shown_in_ci_md_is_a_valid_policy(tmp_path):
    from perturb.gate.rules import load_policy
    block = next(b for b in BLOCKS["docs/ci.md"] if b.lang == "yaml")
    path = tmp_path / "policy.yaml"
    path.write_text(block.code)
    policy = load_policy(path)
    assert len(policy.rules) == 5
    assert dict(policy.compare) == {"max_drop": 0.02, "significance": 0.05, "metrics": ["gamma_r", "t2v.R@1"]}
