"""What a run scores: retrieval metrics per query, bootstrap intervals, absolute and relative
robustness, and the suites' figures against a baseline. Plain numbers in, numbers out.

May import: nothing else of the benchmark.
"""
