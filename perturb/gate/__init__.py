"""Robustness regression gate: check results against rules and baselines."""
