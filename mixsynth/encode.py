"""From a table's model values to latent columns (layout.py builds their constraints).

Two encodings share every later code path:

* ``"rpl"`` (the extended rank-probit likelihood, the product): an unordered categorical
  with K levels gives K level columns with intercepts; its missing cells leave all K
  unconstrained and are reproduced through the categorical joint at synthesis. Levels held
  by under 1% of its rows (LEVEL_COLUMN_SHARE) share one level column when there are two
  or more: a level of a few rows in many carries little information about the other
  columns, its probit mixes in about n / n_level sweeps (Johndrow et al. 2019), and each
  column costs O(n p) a sweep. The categorical joint still holds every level: a synthetic
  row keeps its own rare level, and the copula's columns follow the pool's.
* ``"rl"`` (the paper's RL baseline, method.md section 7): the categorical gives K-1
  binary dummies (base level 0 dropped) under the rank likelihood, no intercepts.

Every other column is one rank column. Columns with missing values (any column under
RL, rank columns under RPL) also get a binary missingness indicator, so the missing rate
and its links to the other variables are modelled (method.md section 5). Columns that are
missing in the same rows (say, two fields from one failed linkage), or in all but fewer than
MIN_BLANK_ROWS rows (and 1%), share one indicator, 1 where any of them is blank: two
(nearly) identical latent columns would make a correlation of (nearly) 1 that the sampler
crawls along (NHEFS: systolic and diastolic blood pressure, blank in 66 and 69 rows, 3 apart).
For the same reason, blanks that a complete binary column spells (a skip pattern: the date
of death is blank where death = 0), in all but that few rows, follow that column instead of
getting an indicator. Blanks in fewer than MIN_INDICATOR_ROWS rows get no indicator and no
synthetic blanks: an indicator with a handful of cases carries almost no information for the
copula, its correlations wander under the prior and stall the chains, and a blank held by one
respondent is as telling as a rare level. (NHEFS's cholesterol, blank in 13 training rows:
its indicator against rare levels was every worst entry of C, max R-hat 1.75 and min bulk ESS
3 after 20,000 sweeps; without it 1.09 and 15.)

A level held on the same rows as an earlier categorical's level, but for fewer than 1% of
them, gets no column of its own (``copied_levels``): no column of its categorical positive
spells it, and the earlier column carries its links (NHEFS asks five questions of half the
sample only: five copies of one "not asked" column).

Skip patterns coded as a level are structural implications: every row of occupation "not
in universe" has a wage of 0, every child under 18 is never married (``implications``). The
copula is fitted to them as to any data (masking the implied cells instead, like blanks,
left the chains no better mixed on the KDD census extract and worse on NHEFS, whose
implications chain through several "unknown" codes), and at synthesis a value column's
implied cells take the implied value, so the rule holds in every synthetic row; a
categorical's come from the categorical joint, which holds them already.
"""
from dataclasses import replace

import numpy as np

from .latent_columns import LatentColumn
from .schema import TableSpec
from .tableio import InputError

METHODS = ("rpl", "rl")
MIN_BLANK_ROWS = 10  # patterns this close (and 1% of rows) share an indicator; a lone level this rare, no column
MIN_INDICATOR_ROWS = 20  # blanks in fewer rows get no indicator: the synthetic column has none there
SPELLING_SLIP = 0.01  # ... and a binary spells a blank pattern it misses in fewer than this share of rows
LEVEL_COLUMN_SHARE = 0.01  # levels of a categorical held by fewer of its rows share one level column
POOL_MAX_SHARE = 0.15      # ... as long as that column holds at most this share of the rows
IMPLIED_CHANCE = 1e-6      # an implication is kept when a table without it would show it less often


def latent_columns(spec: TableSpec, values: dict[str, np.ndarray], method: str,
                   responses: tuple[str, ...] = ()) -> list[LatentColumn]:
    """Latent columns for the model values ``values`` (column -> (n,) float, NaN missing).

    ``responses`` leave the copula for their own model; their missingness indicators stay.
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, not {method!r}")
    slack = min(MIN_BLANK_ROWS, SPELLING_SLIP * len(next(iter(values.values()))))
    patterns: list[tuple[np.ndarray, list[str]]] = []   # (blank rows, the columns blank there)
    for col in spec.columns:
        gap = np.isnan(values[col.name])
        copula_categorical = col.modelled_as == "categorical" and method == "rpl" and col.name not in responses
        if gap.sum() < MIN_INDICATOR_ROWS or copula_categorical:   # a categorical's blanks go with the joint
            continue
        near = next((k for k, (g, _) in enumerate(patterns) if np.count_nonzero(g != gap) < slack), None)
        if near is None:
            patterns.append((gap, [col.name]))
        else:   # (nearly) the same rows: one indicator, blank where any of them is
            patterns[near] = (patterns[near][0] | gap, patterns[near][1] + [col.name])
    spelled = _spelled_blanks(spec, values, patterns, responses, slack)
    implied = implications(spec, values, responses) if method == "rpl" else {}
    first = {names[0]: (tuple(names), gap) for k, (gap, names) in enumerate(patterns) if k not in spelled}
    followers: dict[str, tuple[tuple[str, ...], float]] = {}
    for k, (name, when) in spelled.items():
        blanks = followers.get(name, ((), when))[0]
        followers[name] = (blanks + tuple(patterns[k][1]), when)
    out = []
    for col in spec.columns:
        if col.name in responses:
            pass   # modelled by BART; only its missingness indicator stays
        elif col.modelled_as == "categorical" and method == "rpl":
            out += copied_levels(level_columns(col.name, col.levels, values[col.name]), out, values)
            continue
        elif col.modelled_as == "categorical":
            out += [LatentColumn(f"{col.name}={lv}", col.name, "dummy", i)
                    for i, lv in enumerate(col.levels) if i > 0]
        elif col.name in followers:
            blanks, when = followers[col.name]
            out.append(LatentColumn(col.name, col.name, "value", blanks=blanks, blank_when=when,
                                    blank_share=float(np.mean(values[col.name] == when)),
                                    implied=implied.get(col.name, ())))
        else:
            out.append(LatentColumn(col.name, col.name, "value", implied=implied.get(col.name, ())))
        if col.name in first:
            blanks, gap = first[col.name]
            out.append(LatentColumn(f"{'|'.join(blanks)}:missing", col.name, "missing", blanks=blanks,
                                    blank_share=float(gap.mean())))
    return [replace(c, fixed_where_seen=fixed_where_seen(c, out, values, slack)) if c.blanks else c
            for c in out]


def fixed_where_seen(selector: LatentColumn, columns: list[LatentColumn], values: dict[str, np.ndarray],
                     slack: float) -> tuple[str, ...]:
    """The latent ``columns`` that the rows where the columns ``selector`` blanks are seen
    leave holding one value, but in fewer than ``slack`` rows, where a selection at random
    would leave at least ``slack`` (NHEFS: pregnancies is blank for every man and 83 women,
    so sex is constant where it is seen): their correlation with what it blanks is fixed by
    no row there, and the convergence headline leaves it out."""
    seen = ~np.any([np.isnan(values[b]) for b in selector.blanks], axis=0)

    def others(y):   # rows that differ from the commonest value
        y = y[~np.isnan(y)]
        return y.size - np.unique(y, return_counts=True)[1].max() if y.size else 0

    out = []
    for c in columns:
        if c is selector or c.source in selector.blanks:
            continue
        y = rank_column_values(c, values) if c.role != "level" else \
            np.where(np.isnan(values[c.source]), np.nan, np.isin(values[c.source], c.pooled or (c.level,)))
        if others(y[seen]) < slack <= others(y) * seen.mean():
            out.append(c.name)
    return tuple(out)


def level_columns(name: str, levels: tuple, y: np.ndarray) -> list[LatentColumn]:
    """The RPL level columns of categorical ``name`` with model values ``y`` ((n,) codes, NaN
    missing): one a level, except that levels held by under LEVEL_COLUMN_SHARE of its observed
    rows share one column (named for how many it pools); the rarest of them only, as long as
    the pool holds at most POOL_MAX_SHARE of the rows, so a categorical of many equally small
    levels keeps most of them (a pool of all would lose the column's link to the others).
    A pool, or a lone rare level, held by under LEVEL_COLUMN_SHARE of the rows takes in the
    next smallest levels until it holds that share (while another column remains): a column
    positive in a handful of rows mixes in about n / n_level sweeps, like a rare binary
    (NHEFS: marital status "other", 1 row; KDD census: never worked and without pay, 0.26%).
    A lone rare level that no pool can take in and that fewer than MIN_BLANK_ROWS rows hold
    gets no column at all, as long as two columns remain: like a blank that few rows show, a
    column positive in a handful of rows carries almost nothing the copula could use, its
    correlations wander under the prior and stall the chains (NHEFS: pica 1, 5 training rows
    among a 669-row level and the 641 "not asked", held every one of the worst entries). Its rows are blank to the copula (``copula_codes``); the
    categorical joint still draws the level."""
    counts = np.bincount(y[~np.isnan(y)].astype(np.int64), minlength=len(levels))
    total = counts.sum()
    rare = np.flatnonzero(counts < LEVEL_COLUMN_SHARE * total)
    rare = rare[np.argsort(counts[rare], kind="stable")]             # the rarest first, while
    rare = list(rare[np.cumsum(counts[rare]) <= POOL_MAX_SHARE * total])   # the pool stays small
    others = [int(i) for i in np.argsort(counts, kind="stable") if i not in rare]
    while rare and counts[rare].sum() < LEVEL_COLUMN_SHARE * total and len(others) > 1 \
            and counts[rare].sum() + counts[others[0]] <= POOL_MAX_SHARE * total:
        rare.append(others.pop(0))
    lone = rare[0] if len(rare) == 1 and counts[rare[0]] < MIN_BLANK_ROWS and len(levels) > 2 else -1
    rare = np.sort(np.array(rare if len(rare) >= 2 else [], dtype=np.int64))
    out = [LatentColumn(f"{name}={lv}", name, "level", i) for i, lv in enumerate(levels)
           if i not in rare and i != lone]
    if rare.size:
        out.append(LatentColumn(f"{name}=(pool of {rare.size} levels)", name,
                                "level", int(rare[0]), pooled=tuple(int(r) for r in rare)))
    return out


def copied_levels(columns: list[LatentColumn], earlier: list[LatentColumn], values: dict[str, np.ndarray]
                  ) -> list[LatentColumn]:
    """One categorical's level ``columns`` less a level held on the same rows, but for fewer
    than SPELLING_SLIP of them, as a level column of an ``earlier`` categorical: the first such level
    gets no column of its own (no column of its categorical positive spells it) and the
    others record it (``rest_level``, ``rest_copy``). Two level columns positive on the same
    rows are copies whose correlation of nearly 1 the chains crawl along (NHEFS: hbp,
    diabetes, pica, hbpmed and boweltrouble are all 2, "not asked", on the same 641 rows;
    KDD census: class of worker and occupation "not in universe", 67 rows of 12,900 apart).
    Dropping a level's column still fits every row exactly (its rows have every other
    column negative); the earlier column carries that level's links to the other columns."""
    targets = [c for c in earlier if c.role == "level" and not c.pooled]
    if not targets or len(columns) < 2:
        return columns
    held = {}   # source -> rows holding each level
    for c in targets + columns:
        if c.source not in held:
            y = values[c.source]
            size = 1 + max(d.level for d in targets + columns if d.source == c.source)
            held[c.source] = np.bincount(y[~np.isnan(y)].astype(np.int64), minlength=size)
    y = values[columns[0].source]
    for c in (c for c in columns if not c.pooled):
        slip = SPELLING_SLIP * held[c.source][c.level]
        for t in targets:
            if abs(int(held[c.source][c.level]) - int(held[t.source][t.level])) >= slip:
                continue
            if np.count_nonzero((y == c.level) != (values[t.source] == t.level)) < slip:
                return [replace(d, rest_level=c.level, rest_copy=t.name) for d in columns if d is not c]
    return columns


def copula_codes(codes: np.ndarray, columns: list[LatentColumn], sources: list[str]) -> np.ndarray:
    """Level codes (len(sources), n) as the level columns see them: a pooled level's code
    becomes the code its shared column is positive for (the column's ``level``); a level
    with no column that is not its categorical's ``rest_level`` becomes -1, blank
    (``level_columns``: a lone level of a few rows)."""
    out = codes.copy()
    for r, source in enumerate(sources):
        mine = [c for c in columns if c.source == source and c.role == "level"]
        seen = [lv for c in mine for lv in (c.pooled or (c.level,))] + [c.rest_level for c in mine[:1]]
        out[r][~np.isin(codes[r], seen)] = -1
        for c in mine:
            if c.pooled:
                out[r][np.isin(codes[r], c.pooled)] = c.level
    return out


def implications(spec: TableSpec, values: dict[str, np.ndarray], responses: tuple[str, ...] = ()
                 ) -> dict[str, tuple[tuple[str, int, float], ...]]:
    """Skip patterns coded as a level: a level a of a copula categorical A, held by at least
    LEVEL_COLUMN_SHARE of its rows, on whose rows another column Y always holds the same value
    c (observed in all of them), while c's share s of Y's other observed rows makes that
    implausible by chance: s ** n_a < IMPLIED_CHANCE (a constant Y has s = 1: none).
    Returns Y -> ((A, a, c), ...) for the copula's value columns Y (a categorical's implied
    cells come from the categorical joint, a response's from its own model)."""
    targets = [c.name for c in spec.columns if c.name not in responses and c.modelled_as != "categorical"]
    found: dict[str, list[tuple[str, int, float]]] = {}
    for A in spec.columns:
        if A.modelled_as != "categorical" or A.name in responses:
            continue
        codes = values[A.name]
        observed = ~np.isnan(codes)
        counts = np.bincount(codes[observed].astype(np.int64), minlength=len(A.levels))
        for a in np.flatnonzero(counts >= max(LEVEL_COLUMN_SHARE * observed.sum(), 1)):
            rows = codes == a
            for name in targets:
                y = values[name][rows]
                if np.isnan(y).any() or y.min() != y.max():   # (targets hold no categorical: never A)
                    continue
                other = values[name][~rows]
                other = other[~np.isnan(other)]
                share = np.mean(other == y[0]) if other.size else 1.0
                if share < 1.0 and counts[a] * np.log(max(share, 1e-300)) < np.log(IMPLIED_CHANCE):
                    found.setdefault(name, []).append((A.name, int(a), float(y[0])))
    return {name: tuple(rules) for name, rules in found.items()}


def _spelled_blanks(spec: TableSpec, values: dict[str, np.ndarray], patterns: list[tuple[np.ndarray, list[str]]],
                    responses: tuple[str, ...], slack: float) -> dict[int, tuple[str, float]]:
    """Blank patterns ((n,) bool, columns) that a complete binary column spells (a skip
    pattern: the date of death is blank where death = 0) in all but fewer than ``slack`` rows:
    pattern index -> (that column, its value where the cells are blank). Such blanks follow
    the binary instead of getting an indicator, a copy of it whose correlation of (nearly) 1
    the chains would crawl along (NHEFS: the month and day of death are recorded for every
    death and for 2 of 1,057 survivors). The rows that differ are treated like blanks too few
    for an indicator: at synthesis the cells are blank exactly where the binary says so. A
    binary spells blanks for one of its values only (the first found)."""
    out = {}
    for col in spec.columns:
        y = values[col.name]
        if col.kind != "binary" or col.name in responses or np.isnan(y).any():
            continue
        for when in np.unique(y):
            spelled = [k for k, (gap, _) in enumerate(patterns)
                       if k not in out and np.count_nonzero(gap != (y == when)) < slack]
            if spelled:
                out.update(dict.fromkeys(spelled, (col.name, float(when))))
                break
    return out


def categorical_sources(columns: list[LatentColumn]) -> list[str]:
    """Source columns with level columns (RPL categoricals), in order of appearance."""
    return list(dict.fromkeys(c.source for c in columns if c.role == "level"))


def level_codes(values: dict[str, np.ndarray], sources: list[str]) -> np.ndarray:
    """(len(sources), n) int64 level codes with -1 for missing."""
    n = len(next(iter(values.values())))
    codes = np.empty((len(sources), n), dtype=np.int64)
    for r, name in enumerate(sources):
        y = values[name]
        codes[r] = np.where(np.isnan(y), -1, np.nan_to_num(y, nan=-1)).astype(np.int64)
    return codes


def rank_column_values(col: LatentColumn, values: dict[str, np.ndarray]) -> np.ndarray:
    """The (n,) values latent column ``col`` orders by, NaN where unconstrained, from the
    model values (column -> (n,)). An indicator is 1 where any column it stands for is blank
    (blank patterns that differ in a few rows share one indicator)."""
    y = values[col.source]
    if col.role == "missing":
        return np.any([np.isnan(values[b]) for b in col.blanks], axis=0).astype(float)
    if col.role == "dummy":
        return np.where(np.isnan(y), np.nan, (y == col.level).astype(float))
    return y
