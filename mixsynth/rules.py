"""Edit rules: conditions every record must meet (a skip pattern, a logical constraint), such
as ``death == 1 or yrdth.isna()``. A copula cannot hold such a deterministic relation exactly,
so synthetic rows that break a rule are drawn again (the spec's ``synthesis: {rules: [...]}``);
the real file must meet every rule, which the fit checks.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .tableio import InputError


def rules_hold(frame: pd.DataFrame, rules) -> np.ndarray:
    """(n,) bool: rows of ``frame`` meeting every rule (pandas expressions over its columns,
    evaluated with the Python engine; a comparison with a missing value is False)."""
    ok = np.ones(len(frame), bool)
    for rule in rules:
        ok &= _evaluate(frame, rule)
    return ok


def check_rules(frame: pd.DataFrame, rules) -> None:
    """InputError naming the first rule that is malformed or that some real row breaks
    (with the count of such rows, never a value)."""
    if not isinstance(rules, (list, tuple)) or not all(isinstance(r, str) for r in rules):
        raise InputError("synthesis.rules must be a list of expressions such as \"death == 1 or yrdth.isna()\"")
    for rule in rules:
        broken = int((~_evaluate(frame, rule)).sum())
        if broken:
            raise InputError(f"synthesis rule '{rule}' fails on {broken:,} real row(s); a rule must hold "
                             "on every real row: correct the rule or the data")


def _evaluate(frame: pd.DataFrame, rule: str) -> np.ndarray:
    try:
        result = frame.eval(rule, engine="python")
    except Exception as exc:  # pandas raises many types; none of them quotes data here
        raise InputError(f"synthesis rule '{rule}' cannot be evaluated ({type(exc).__name__}); "
                         "write a pandas expression over the spec's column names") from None
    if not isinstance(result, pd.Series) or result.dtype != bool:
        raise InputError(f"synthesis rule '{rule}' is not a true/false condition on each row")
    return result.to_numpy()
