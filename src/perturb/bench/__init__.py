"""The benchmark runner, in rooms that show its work, each above the ones it may import:

- ``adapters``: the models (one small protocol and its built-in adapters);
- ``scoring``: what a run scores (retrieval metrics, bootstrap intervals, robustness, suite figures);
- ``pipeline``: what runs (the jobs, their sources, the encoder and its cache);
- ``distributed``: where it runs (devices, placement, replicas, shards, the dry run);
- ``reporting``: what it shows (the Markdown/HTML report and its plots).

On top: ``api`` (the library call), ``options`` (the run's options object, built once from the
command line or by the caller), ``results`` (the results document), ``checks`` (the command
line's options checked before any work), and the command lines ``cli``, ``cache_cli`` and
``report_cli``.
"""
