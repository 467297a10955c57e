"""The release decision: a pure function from a report and the spec's release rules.

The spec's ``release:`` section::

    release:
      intended_uses: "teaching and regression analyses of wages"
      rules:
        - {measure: mean_cio, min: 0.7, limitation: "regression intervals may differ from the real file's"}
        - {measure: max_cramers_v_drop, max: 0.05}
        - {measure: exact_copies, max: 0}

Each rule names a headline measure (``mixsynth.report.measures.HEADLINE_MEASURES``) and a bound,
``min`` (value >= min passes) and/or ``max`` (value <= max passes); an optional ``limitation``
is the text to publish with the file if the rule fails, which lets the file go out with that
limitation instead of being rejected. A measure the report did not compute (None) fails with
the reason "not measured", and no limitation text lets it pass: nothing was checked.
"""
from __future__ import annotations

from .build import SCHEMA
from .measures import HEADLINE_MEASURES
from ..tableio import InputError

DECISION_SCHEMA = "mixsynth-decision/1"
_RULE_KEYS = ("measure", "min", "max", "limitation")


def check_release_spec(release_spec: dict) -> list[dict]:
    """The rules of a ``release:`` section, validated (InputError naming the bad rule)."""
    if not isinstance(release_spec, dict):
        raise InputError("the `release` section must be a mapping with `intended_uses` and `rules`")
    unknown = [k for k in release_spec if k not in ("intended_uses", "rules")]
    if unknown:
        raise InputError(f"spec: unknown key(s) under release: {', '.join(map(str, unknown))}; "
                         f"allowed: intended_uses, rules")
    rules = release_spec.get("rules")
    if not isinstance(rules, list) or not rules:
        raise InputError("release.rules must be a non-empty list of {measure, min/max, limitation} "
                         "mappings; declare at least one rule")
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict) or "measure" not in rule:
            raise InputError(f"release.rules[{i}] must be a mapping with a `measure` key")
        bad = [k for k in rule if k not in _RULE_KEYS]
        if bad:
            raise InputError(f"release.rules[{i}]: unknown key(s) {', '.join(map(str, bad))}; "
                             f"allowed: {', '.join(_RULE_KEYS)}")
        if rule["measure"] not in HEADLINE_MEASURES:
            raise InputError(f"release.rules[{i}]: unknown measure '{rule['measure']}'; "
                             f"known measures: {', '.join(HEADLINE_MEASURES)}")
        if "min" not in rule and "max" not in rule:
            raise InputError(f"release.rules[{i}] ({rule['measure']}): give a `min` or a `max` threshold")
        for k in ("min", "max"):
            v = rule.get(k)
            if k in rule and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise InputError(f"release.rules[{i}] ({rule['measure']}): `{k}` must be a number")
        text = rule.get("limitation")
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise InputError(f"release.rules[{i}] ({rule['measure']}): `limitation` must be a non-empty text")
    return rules


def decide(report: dict, release_spec: dict) -> dict:
    """Check every rule against ``report["headline"]``.

    Returns {schema, intended_uses, decision, rules: [{measure, value, min, max, threshold,
    passed, reason, passes_with_limitation, limitation}], limitations: [texts to publish]}.
    decision: "release" when every rule passes, "release with limitations" when every failed
    rule carries a limitation, else "reject". An empty rule list is an InputError (nothing
    checked is not the same as everything held).
    """
    rules = check_release_spec(release_spec)
    if report.get("schema") != SCHEMA:
        raise InputError(f"the report is not a {SCHEMA} report; build it with mixsynth.report.build")
    headline = report.get("headline") or {}
    checked = []
    for rule in rules:
        measure = rule["measure"]
        value = headline.get(measure)
        lo, hi = rule.get("min"), rule.get("max")
        threshold = " and ".join(([f">= {lo:g}"] if lo is not None else []) +
                                 ([f"<= {hi:g}"] if hi is not None else []))
        if value is None:
            passed, reason = False, "not measured"
        elif lo is not None and value < lo:
            passed, reason = False, f"{value:.4g} is below the minimum {lo:g}"
        elif hi is not None and value > hi:
            passed, reason = False, f"{value:.4g} is above the maximum {hi:g}"
        else:
            passed, reason = True, f"{value:.4g} meets {threshold}"
        limitation = rule.get("limitation")
        with_limitation = not passed and value is not None and limitation is not None
        checked.append({"measure": measure, "value": value, "min": lo, "max": hi, "threshold": threshold,
                        "passed": passed, "reason": reason, "passes_with_limitation": with_limitation,
                        "limitation": limitation if with_limitation else None})
    failed = [r for r in checked if not r["passed"]]
    if not failed:
        decision = "release"
    elif all(r["passes_with_limitation"] for r in failed):
        decision = "release with limitations"
    else:
        decision = "reject"
    return {"schema": DECISION_SCHEMA, "intended_uses": release_spec.get("intended_uses"),
            "decision": decision, "rules": checked,
            "limitations": [r["limitation"] for r in failed if r["passes_with_limitation"]]}
