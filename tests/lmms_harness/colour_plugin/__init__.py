"""An lmms-eval plugin (``LMMS_EVAL_PLUGINS=colour_plugin``, with ``tests/lmms_harness`` on PYTHONPATH: not
``tests/``, whose datasets.py would hide Hugging Face's) for the bridge's end-to-end test; it is
imported only inside the lmms environment, by lmms-eval."""
