"""The model's layout: which columns the copula models and how, fitted once from the
training table and saved with the model.

A layout holds the spec, the latent columns (encode.py), the columns derived exactly from
another (derived.py) and those kept within a categorical they determine, the responses BART
models (declared, or chosen by the screen in screen.py) and the screen's scores. The copula's
chains, the response models and synthesis all read it; none of them changes it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .derived import Derivation, Refinement, find_derivations, find_refinements
from .encode import categorical_sources, copula_codes, latent_columns, level_codes, rank_column_values
from .constraints import Constraints, build_constraints
from .latent_columns import LatentColumn
from .schema import TableSpec
from .screen import ResponseScreen, regression_outcomes, screen_responses


@dataclass(frozen=True)
class Layout:
    """spec: the table's spec; columns: the copula's latent columns (p*,); responses: the
    columns BART models, in order; derived, refined: derived.py's Derivation and Refinement
    of each such column; screen: the screen's scores (None when the spec named the
    responses); method: "rpl" or "rl"."""
    spec: TableSpec
    columns: tuple[LatentColumn, ...]
    responses: tuple[str, ...]
    derived: tuple[Derivation, ...] = ()
    refined: tuple[Refinement, ...] = ()
    screen: ResponseScreen | None = None
    method: str = "rpl"

    @property
    def copula_spec(self) -> TableSpec:
        """The spec without the derived columns: the columns the copula and BART model."""
        return copula_spec(self.spec, self.derived)

    @property
    def sources(self) -> list[str]:
        """The categoricals with level columns (RPL), in order of appearance."""
        return categorical_sources(list(self.columns))

    def constraints(self, values: dict[str, np.ndarray]) -> Constraints:
        """The constraints the model values (column -> (n,), NaN missing) put on the latent
        columns (confidential: they hold the data's order)."""
        sources = self.sources
        rank_values = {c.name: rank_column_values(c, values) for c in self.columns if c.role != "level"}
        codes = copula_codes(level_codes(values, sources), list(self.columns), sources)
        return build_constraints(list(self.columns), rank_values, codes, {s: r for r, s in enumerate(sources)})

    def implications(self) -> list[str]:
        """The skip patterns coded as a level that the synthetic file keeps exactly
        (encode.implications), as ``"A=a -> Y=c"`` in the table's labels; aggregates only."""
        def label(column, code):
            levels = self.spec.column(column).levels
            return levels[int(code)] if levels else f"{code:g}"
        rules = {}
        for c in self.columns:
            for source, level, value in c.implied:
                rules[f"{source}={label(source, level)} -> {c.source}={label(c.source, value)}"] = None
        return list(rules)

    def summary(self) -> dict:
        """Which columns BART models and why, for reports and records (aggregates only):
        ``modelled`` in order, ``chosen_by`` ("screen" or "spec"), the derived and refined
        columns, and the screen's scores (None when the spec named them)."""
        return {"modelled": list(self.responses), "chosen_by": "spec" if self.screen is None else "screen",
                "derived": [d.describe() for d in self.derived],
                "refined": [r.describe() for r in self.refined],
                "summary": (self.screen.summary() if self.screen is not None else
                            f"modelled by BART (declared in the spec): {', '.join(self.responses) or 'none'}"),
                "screen": None if self.screen is None else self.screen.to_dict()}


def copula_spec(spec: TableSpec, derived) -> TableSpec:
    """``spec`` without the ``derived`` columns."""
    names = {d.name for d in derived}
    return replace(spec, columns=tuple(c for c in spec.columns if c.name not in names))


def fit_layout(spec: TableSpec, values: dict[str, np.ndarray], responses: str | tuple[str, ...],
               method: str, seed: int) -> Layout:
    """The layout of a table's model values (column -> (n,), NaN missing) under ``spec``.

    ``responses`` "auto" runs the screen (seeded by ``seed``); "none" models none by BART.
    A response's values come later, from BART: it is never refined. With "auto" the screen
    chooses no refinement's column but a declared regression outcome, so those are kept out.
    """
    declared = () if isinstance(responses, str) else tuple(responses)
    derived = find_derivations(spec, values, declared) if spec.derived == "auto" else []
    keep = tuple(regression_outcomes(spec)) if responses == "auto" else declared
    refined = find_refinements(spec, values, derived, keep) if spec.derived == "auto" else []
    screen = None
    if responses == "auto":
        linked = {r.name: r.by for r in refined} | {r.by: r.name for r in refined}
        screen = screen_responses(copula_spec(spec, derived), values, seed, linked)
        declared = tuple(screen.order)
    columns = latent_columns(copula_spec(spec, derived), values, method, declared)
    return Layout(spec, tuple(columns), declared, tuple(derived), tuple(refined), screen, method)
