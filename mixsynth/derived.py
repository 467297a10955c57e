"""Columns that are a function of another column, kept exactly by deriving them.

Survey files hold recodes and merged context: an age group beside age, a major industry
beside the detailed one, a state's cigarette price and tax beside the state, a death flag
beside the year of death. A copula draws each such column on its own, so a synthetic row
can be a child in the over-50 group, or a state with another state's price; a classifier
then tells the synthetic file from the real one at a glance (NHEFS: the state and its
four price and tax columns).

A column B is derived from a column A when, in the real rows, every value of A (a blank
is a value) goes with one value of B, and a table without that link would show it with
a chance below DERIVED_CHANCE: under independence a group of A of n_g rows is pure with
probability sum_b s_b^n_g (s_b: the share of B's value b), and the groups are
independent, so the chance is their product. A must be a column whose synthetic values
are real values (categorical, binary, ordinal, count; not a continuous or date column,
nor a count of mostly unique values, whose marginals smooth) and not a BART response. B
leaves the model; at synthesis it is looked up from A's synthetic value.

An ordered A whose marginal smooths (a continuous age) is a source too when B is a recode of
it by thresholds (``_steps``): each value of B holds one interval of A, so B is a lookup
from A's synthetic value all the same (a child flag from age: RAND's MedExp, where the flag
and age in the copula made a latent correlation near 1 that the chains crawled along, and
synthetic children of 40). The chance is that of B's values falling into as many runs as
values along A's order: g! prod_b n_b! / n! for g values held by n_b of the n rows. An unordered
categorical is not derived from an ordered column (``_loses_levels``): the categorical
stays in the copula and the ordered column is kept within its levels (``Refinement``).
Columns are visited from the most to the fewest distinct values, and B's source is
visited before B, so a chain (B from A, C from B) ends at a modelled column and the
derivations come in the order their lookups run.
"""
from dataclasses import dataclass

import numpy as np
from scipy import special

from .marginals import returns_real_values
from .schema import ColumnSpec, TableSpec

DERIVED_CHANCE = 1e-6  # a link a table without it would show less often than this is kept
MAX_STEPS = 20  # a recode of a smoothed column by thresholds has at most this many values


@dataclass(frozen=True)
class Derivation:
    """Column ``name`` as a function of column ``source``, on model values: ``keys`` (m,)
    the source's distinct values ascending (NaN last, for a blank), ``values`` (m,) the
    value of ``name`` at each (NaN: blank). The keys are real values of the source: the
    model holding a Derivation is confidential, like its marginals."""
    name: str
    source: str
    keys: np.ndarray
    values: np.ndarray

    def apply(self, source: np.ndarray) -> np.ndarray:
        """(n,) model values of ``name`` for source model values ``source`` (n,). A value
        between two keys (a recode by thresholds, ``_steps``: by design) takes the
        nearest key below."""
        seen = ~np.isnan(self.keys)
        keys, vals = self.keys[seen], self.values[seen]
        idx = np.clip(np.searchsorted(keys, source, side="right") - 1, 0, keys.size - 1)
        blank_value = self.values[~seen][0] if (~seen).any() else np.nan
        return np.where(np.isnan(source), blank_value, vals[idx] if keys.size else np.nan)

    def describe(self) -> str:
        return f"{self.name} from {self.source}"

    def to_state(self) -> tuple[dict, dict]:
        return {"name": self.name, "source": self.source}, {"keys": self.keys, "values": self.values}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> "Derivation":
        return cls(meta["name"], meta["source"], arrays["keys"], arrays["values"])


def find_derivations(spec: TableSpec, values: dict[str, np.ndarray],
                     keep: tuple[str, ...] = ()) -> list[Derivation]:
    """The derived columns of ``values`` (column -> (n,) model values, NaN blank), in the
    order their lookups run. Columns in ``keep`` (declared responses) are never derived
    and never a source."""
    groups = {c.name: _groups(values[c.name]) for c in spec.columns}
    order = sorted((c.name for c in spec.columns), key=lambda name: -groups[name][1].size)
    sources = {c.name for c in spec.columns if c.name not in keep and _real_values(spec, c.name, values[c.name])}
    ordered = {c.name for c in spec.columns if c.name not in keep and c.modelled_as != "categorical"}
    derived: list[Derivation] = []
    for i, name in enumerate(order):
        if name in keep or groups[name][1].size < 2:
            continue
        found = None
        candidates = [s for s in reversed(order[:i]) if not _loses_levels(spec.column(name), spec.column(s))]
        for source in candidates:   # the fewest distinct values first: the nearest coarsening
            if source in sources and _linked(groups[source], groups[name]):
                found = _derivation(name, source, values[source], values[name], groups[source][1])
                break
        if found is None and groups[name][1].size <= MAX_STEPS:   # else a recode of a smoothed column
            for source in candidates:
                if source not in sources and source in ordered:
                    found = _steps(name, source, values[source], values[name], groups[source], groups[name])
                    if found is not None:
                        break
        if found is not None:
            derived.append(found)
    return derived


@dataclass(frozen=True)
class Refinement:
    """Ordered column ``name`` kept consistent with the unordered categorical ``by`` that is a
    function of it, when ``by`` stays in the copula for its level columns (``_loses_levels``).
    A synthetic row whose value of ``name`` maps to another level than its ``by`` gets
    ``name`` drawn again from the real rows of its level: ``values`` (m,) the values of
    ``name`` held by at least two rows (the only ones its marginal returns), ``codes`` (m,)
    the level of ``by`` each goes with (NaN: blank), ``weights`` (m,) their rows.
    Confidential, like a Derivation."""
    name: str
    by: str
    codes: np.ndarray
    values: np.ndarray
    weights: np.ndarray

    def apply(self, y: np.ndarray, level: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """(n,) values of ``name`` given its synthetic values ``y`` (n,) and the levels of
        ``by`` (n,), and how many rows were drawn again."""
        off = ~_same(Derivation(self.by, self.name, self.values, self.codes).apply(y), level)
        out = y.copy()
        for code in np.unique(level[off]):
            rows = np.flatnonzero(off & _same(level, code))
            here = _same(self.codes, code)
            if here.any():
                w = self.weights[here]
                out[rows] = rng.choice(self.values[here], size=rows.size, p=w / w.sum())
        return out, int(off.sum())

    def describe(self) -> str:
        return f"{self.name} within {self.by}"

    def to_state(self) -> tuple[dict, dict]:
        return ({"name": self.name, "by": self.by},
                {"codes": self.codes, "values": self.values, "weights": self.weights})

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> "Refinement":
        return cls(meta["name"], meta["by"], arrays["codes"], arrays["values"], arrays["weights"])


def find_refinements(spec: TableSpec, values: dict[str, np.ndarray], derived: list[Derivation],
                     keep: tuple[str, ...] = ()) -> list[Refinement]:
    """The ordered columns of ``values`` that determine an unordered categorical which stays
    in the copula (``_loses_levels``), one categorical each (the one with the fewest levels):
    neither may be derived or in ``keep``."""
    out = {}
    skip = {d.name for d in derived} | set(keep)
    cats = {c.name: _groups(values[c.name]) for c in sorted(spec.columns, key=lambda c: len(c.levels))
            if c.modelled_as == "categorical" and c.name not in skip}
    for col in spec.columns:
        if col.name in skip or col.modelled_as == "categorical" or \
                not _real_values(spec, col.name, values[col.name]):
            continue
        a = _groups(values[col.name])
        for cat, groups in cats.items():
            if _linked(a, groups):
                out[col.name] = _refinement(col.name, cat, values[col.name], values[cat], a)
                break
    return list(out.values())


def _refinement(name: str, by: str, y: np.ndarray, level: np.ndarray, groups: tuple) -> Refinement:
    """The Refinement of ``name`` (values ``y``) within ``by`` (levels ``level``)."""
    _, first, sizes = groups   # each value of name holds one level of by
    shared = first[sizes >= 2]  # a value held by one row is never drawn
    return Refinement(name, by, level[shared], y[shared], sizes[sizes >= 2].astype(float))


def _same(a: np.ndarray, b) -> np.ndarray:
    """Elementwise equality with NaN equal to NaN."""
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _loses_levels(derived: ColumnSpec, source: ColumnSpec) -> bool:
    """Whether deriving an unordered categorical from an ordered column would lose its level
    columns: the copula carries the source's links through one rank column, monotone only,
    and the categorical's own links with the other columns went with it (NHEFS: education
    from years of school lost the weight-gain regression's education terms)."""
    return derived.modelled_as == "categorical" and source.modelled_as != "categorical"


def _real_values(spec: TableSpec, name: str, y: np.ndarray) -> bool:
    """Whether column ``name``'s synthetic values are real values: a categorical's (from the
    joint), and a binary, ordinal or count column's with an empirical marginal."""
    kind = spec.column(name).kind
    return kind == "categorical" or returns_real_values(y[~np.isnan(y)], kind)


def _groups(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``y``'s distinct values (a blank is a value): (n,) int codes, (g,) the first row of
    each and (g,) how many rows hold it."""
    _, first, codes, sizes = np.unique(np.where(np.isnan(y), np.inf, y), return_index=True,
                                       return_inverse=True, return_counts=True)
    return codes.ravel(), first, sizes


def _linked(a: tuple, b: tuple) -> bool:
    """Whether every group of A (``_groups``) holds one B value, and a table without the
    link would show that with chance below DERIVED_CHANCE."""
    codes_a, first, sizes = a
    codes_b = b[0]
    if not np.array_equal(codes_b, codes_b[first][codes_a]):
        return False
    log_share = np.log(b[2] / codes_b.size)
    log_pure = special.logsumexp(sizes[:, None] * log_share[None, :], axis=1)
    return bool(log_pure.sum() < np.log(DERIVED_CHANCE))


def _steps(name: str, source: str, a: np.ndarray, b: np.ndarray, groups_a: tuple, groups_b: tuple
           ) -> Derivation | None:
    """The Derivation of ``name`` (values ``b``, (n,)) from the ordered ``source`` (``a``;
    both with their ``_groups``) when b is a function of a whose values each hold one
    interval of a's values, and a table without the link would show that with chance below
    DERIVED_CHANCE; else None. Its keys are the intervals' lowest values of a."""
    codes_a, first, sizes = groups_a
    codes_b = groups_b[0]
    if not np.array_equal(codes_b, codes_b[first][codes_a]):   # not a function of a
        return None
    seen = ~np.isnan(a[first])   # a's groups in ascending order, a blank last
    level = codes_b[first][seen]
    starts = np.r_[0, np.flatnonzero(level[1:] != level[:-1]) + 1]
    if starts.size < 2 or starts.size != np.unique(level).size:   # a value of b in two intervals
        return None
    runs = np.add.reduceat(sizes[seen], starts)
    log_chance = special.gammaln(starts.size + 1) + special.gammaln(runs + 1).sum() - special.gammaln(runs.sum() + 1)
    if log_chance >= np.log(DERIVED_CHANCE):
        return None
    rows = np.r_[first[seen][starts], first[~seen]]
    return Derivation(name, source, a[rows], b[rows])


def _derivation(name: str, source: str, a: np.ndarray, b: np.ndarray, first: np.ndarray) -> Derivation:
    """The lookup from the first row of each group of A (every row of a group agrees);
    ``first`` lists them in the order of A's values, a blank last."""
    return Derivation(name, source, a[first], b[first])

