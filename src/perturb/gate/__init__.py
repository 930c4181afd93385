"""Robustness regression gate: check results against rules and baselines (``perturb check``/``compare``)."""
from .check import check
from .compare import compare
from ..errors import GateInputError
from ..results import Results, load_results, validate
from .rules import Policy, Rule, load_policy, parse_rule

__all__ = ["GateInputError", "Policy", "Results", "Rule", "check", "compare", "load_policy",
           "load_results", "parse_rule", "validate"]
