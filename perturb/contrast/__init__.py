"""Contrast captions (hard negatives) and multiple-choice sets."""
