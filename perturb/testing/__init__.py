"""Helpers for robustness tests in CI."""
