"""Benchmark runner: model adapters, metrics, robustness scores, reports."""
