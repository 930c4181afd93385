"""The bridge to lmms-eval: task variants over perturb-built corrupted copies (``perturb lmms-tasks``)
and the scoring of the harness's results. It reads lmms-eval's YAML and JSON files and never imports
lmms_eval; the task code it writes imports only the standard library and the original task's module.

May import: nothing of the benchmark.
"""
