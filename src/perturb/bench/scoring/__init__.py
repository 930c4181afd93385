"""What a run scores: retrieval metrics per query, classification top-k per sample, bootstrap
intervals, absolute and relative robustness, and the suites' figures (mCE, relative mCE, mPC, rPC)
against a baseline, named or from a file. Plain numbers in, numbers out.

May import: nothing else of the benchmark.
"""
