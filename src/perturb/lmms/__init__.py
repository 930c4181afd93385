"""The bridge to lmms-eval: task variants over perturb-built corrupted copies (``perturb lmms-tasks``)
and the scoring of the harness's results. It reads lmms-eval's YAML and JSON files and never imports
lmms_eval; the task code it writes imports only the standard library and the original task's module.

It scores with the benchmark's own γ, paired bootstrap intervals and suite figures.

May import: scoring.
"""
