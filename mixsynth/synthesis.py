"""Synthetic rows from one posterior draw (method.md section 5), in the factor form.

For each synthetic row: draw the categorical combination from the (optionally smoothed)
empirical joint; draw the factors eta given that combination (exactly, by matching
unconstrained draws of (eta, z_cat) to the rows whose combination their signs spell,
with a Gibbs chain on (z_cat, eta) as the fallback); then z_rest = Lambda_rest eta + eps
and y = F^-1(Phi(z / sd)). Every row has exactly one level per categorical variable.
"""
from dataclasses import dataclass

import numpy as np
from scipy import special

from .encode import copula_codes
from .constraints import build_constraints, draw_latent
from .latent_columns import LatentColumn
from .kernels.truncnorm import seed_streams

MIN_MATCH_SHARE = 0.01  # a proposal batch matching fewer of the rows left ends the proposals


@dataclass(frozen=True)
class Draw:
    """One posterior draw: alpha (p,), Lambda (p, k), sigma2 (p,)."""
    alpha: np.ndarray
    Lambda: np.ndarray
    sigma2: np.ndarray


@dataclass(frozen=True)
class CategoricalJoint:
    """The observed combinations of the categorical variables.

    cells: (m, q) level codes (-1 = missing) of the m distinct combinations of q variables;
    counts: (m,) rows holding each; margins: per variable, (K + 1,) probabilities of
    missing (index 0) and each level (index 1 + code), the base of the smoothing.
    """
    cells: np.ndarray
    counts: np.ndarray
    margins: list[np.ndarray]

    @classmethod
    def from_codes(cls, codes: np.ndarray, n_levels: list[int]) -> "CategoricalJoint":
        """``codes``: (q, n) level codes with -1 for missing."""
        cells, counts = np.unique(codes.T, axis=0, return_counts=True)
        margins = [np.bincount(row + 1, minlength=k + 1) / row.size for row, k in zip(codes, n_levels)]
        return cls(cells.astype(np.int64), counts.astype(np.int64), margins)

    def sample(self, n: int, rng: np.random.Generator, prior_strength: float = 0.0,
               min_count: int = 1) -> np.ndarray:
        """(q, n) codes of n synthetic combinations.

        With the defaults, combinations are drawn with their empirical frequencies (the
        paper). ``prior_strength`` a > 0 smooths the joint as the posterior predictive of a
        Dirichlet process whose base is the product of the margins: a combination is drawn
        from the base with probability (a + r) / (N + a), where r counts the rows of
        combinations seen fewer than ``min_count`` times, which are never copied as such.
        """
        keep = self.counts >= min_count
        weights = self.counts[keep].astype(float)
        base = prior_strength + self.counts[~keep].sum()
        from_base = rng.random(n) < base / (weights.sum() + base)
        out = np.empty((len(self.margins), n), dtype=np.int64)
        n_emp = int((~from_base).sum())
        if n_emp:
            pick = rng.choice(weights.size, size=n_emp, p=weights / weights.sum())
            out[:, ~from_base] = self.cells[keep][pick].T
        for r, m in enumerate(self.margins):
            out[r, from_base] = rng.choice(m.size, size=int(from_base.sum()), p=m) - 1
        return out


def latent_rows(draw: Draw, columns: list[LatentColumn], cat_codes: np.ndarray,
                sources: list[str], seed: np.random.SeedSequence, proposals: int = 20,
                gibbs_steps: int = 200) -> tuple[np.ndarray, float]:
    """Standardized latent rows (p, n) for synthetic rows whose categorical codes are
    ``cat_codes`` (len(sources), n), and the share of rows whose factors were drawn exactly.
    Level columns hold latents drawn on their rows' orthants.

    eta given the categorical combination is drawn exactly by rejection: ``proposals``
    batches of n unconstrained draws of (eta, z_cat) are matched to the rows whose
    combination their signs spell out; proposing stops early once a batch matches under
    ``MIN_MATCH_SHARE`` of the rows left (many categoricals make most combinations unique).
    A row left without a match (a combination the model finds rare) gets ``gibbs_steps``
    sweeps of the (z_cat | eta, eta | z_cat) Gibbs sampler.
    """
    rng_seed, stream_seed = seed.spawn(2)
    rng = np.random.default_rng(rng_seed)
    cat_codes = copula_codes(cat_codes, columns, sources)
    n = cat_codes.shape[1]
    k = draw.Lambda.shape[1]
    etaT = rng.standard_normal((k, n))
    exact = 1.0
    L = np.flatnonzero([c.role == "level" for c in columns])
    if L.size:
        lam, alpha, sd = draw.Lambda[L], draw.alpha[L], np.sqrt(draw.sigma2[L])
        groups = [np.flatnonzero([columns[j].source == s for j in L]) for s in sources]
        levels = [np.array([columns[L[g]].level for g in group]) for group in groups]
        rest = [columns[L[group[0]]].rest_level for group in groups]
        todo = np.ones(n, bool)
        for _ in range(proposals):
            if not todo.any():
                break
            prop_eta = rng.standard_normal((k, n))
            zl = lam @ prop_eta + alpha[:, None] + sd[:, None] * rng.standard_normal((L.size, n))
            rows, props = _match(cat_codes, todo, _sign_codes(zl, groups, levels, rest))
            etaT[:, rows] = prop_eta[:, props]
            left = todo.sum()
            todo[rows] = False
            if rows.size < MIN_MATCH_SHARE * left:
                break
        exact = float(1.0 - todo.mean())
        if todo.any():
            etaT[:, todo] = _gibbs(draw, L, [columns[j] for j in L], cat_codes[:, todo], sources,
                                   etaT[:, todo], rng, stream_seed, gibbs_steps)
    Zt = draw.Lambda @ etaT
    Zt += draw.alpha[:, None] + np.sqrt(draw.sigma2)[:, None] * rng.standard_normal(Zt.shape)
    if L.size:   # level latents given eta, on the orthants of the rows' combinations
        cons = build_constraints([columns[j] for j in L], {}, cat_codes,
                                 {s: r for r, s in enumerate(sources)})
        Zl = np.ascontiguousarray(Zt[L])
        draw_latent(Zl, draw.Lambda[L] @ etaT + draw.alpha[L, None], np.sqrt(draw.sigma2[L]), cons,
                    seed_streams(stream_seed.spawn(1)[0], L.size))
        Zt[L] = Zl
    scale = np.sqrt((draw.Lambda ** 2).sum(axis=1) + draw.sigma2)
    return Zt / scale[:, None], exact


def _sign_codes(zl: np.ndarray, groups: list[np.ndarray], levels: list[np.ndarray],
                rest: list[int]) -> np.ndarray:
    """(q, n) codes spelled by the signs of level latents ``zl`` (|L|, n): the level (of
    ``levels``, one per column of the group) whose latent alone is positive; when none is,
    the categorical's level without a column (``rest``, -1 when it has none); -2 when
    several are or none is and every level has a column."""
    out = np.empty((len(groups), zl.shape[1]), dtype=np.int64)
    for r, (g, lv, none) in enumerate(zip(groups, levels, rest)):
        pos = zl[g] > 0
        count = pos.sum(axis=0)
        out[r] = np.where(count == 1, lv[pos.argmax(axis=0)], np.where((count == 0) & (none >= 0), none, -2))
    return out


def _match(codes: np.ndarray, todo: np.ndarray, prop_codes: np.ndarray):
    """Pair rows still ``todo`` with proposals spelling the same combination; a missing
    code (-1) in a row accepts anything there. Returns (row indices, proposal indices)."""
    rows_all, props_all = [], []
    free = np.ones(prop_codes.shape[1], bool)
    missing = codes < 0
    # rows grouped by blank pattern through one key a row, not a sort of columns; the patterns
    # come in the order that sort gave, so the pairs are the same
    waiting = np.flatnonzero(todo)
    patterns, which = np.unique(_column_keys(missing[:, waiting].astype(np.int64)), return_inverse=True)
    order = waiting[np.argsort(which, kind="stable")]
    bounds = np.concatenate([[0], np.cumsum(np.bincount(which, minlength=patterns.size))])
    for g in range(patterns.size):
        rows = order[bounds[g]:bounds[g + 1]]
        pattern = missing[:, rows[0]]
        props = np.flatnonzero(free)
        masked = np.where(pattern[:, None], -1, prop_codes[:, props])
        key = _column_keys(np.concatenate([codes[:, rows], masked], axis=1))
        r, p = _pair_equal(key[:rows.size], key[rows.size:])
        rows_all.append(rows[r])
        props_all.append(props[p])
        free[props[p]] = False
    return np.concatenate(rows_all), np.concatenate(props_all)


def _column_keys(codes: np.ndarray) -> np.ndarray:
    """(n,) int64 keys of the columns of ``codes`` (q, n), codes >= -2: equal exactly for equal
    columns. Mixed radix, renumbered by np.unique before it could overflow: a sort of n numbers
    now and then instead of a sort of n columns (on the whole KDD file's synthesis, the column
    sort was 16.5 of 75 s for 20,000 rows)."""
    key = np.zeros(codes.shape[1], dtype=np.int64)
    top = 1
    for row in codes:
        radix = int(row.max()) + 3
        if top * radix >= 2 ** 62:
            _, key = np.unique(key, return_inverse=True)
            top = int(key.max()) + 1
        key = key * radix + (row + 2)
        top *= radix
    return key


def _pair_equal(a: np.ndarray, b: np.ndarray):
    """Indices (i, j) pairing elements of ``a`` with distinct elements of ``b`` of equal
    value, as many pairs as possible."""
    ao, bo = np.argsort(a, kind="stable"), np.argsort(b, kind="stable")
    sa, sb = a[ao], b[bo]
    rank = np.arange(sa.size) - np.searchsorted(sa, sa, side="left")
    start = np.searchsorted(sb, sa, side="left")
    ok = rank < np.searchsorted(sb, sa, side="right") - start
    return ao[ok], bo[start[ok] + rank[ok]]


def _gibbs(draw: Draw, L: np.ndarray, level_columns: list[LatentColumn], codes: np.ndarray,
           sources: list[str], etaT: np.ndarray, rng: np.random.Generator,
           stream_seed: np.random.SeedSequence, steps: int) -> np.ndarray:
    """``steps`` sweeps of Gibbs on (z_cat, eta) for rows with categorical ``codes``; eta (k, m)."""
    k, m = etaT.shape
    lam, alpha, prec = draw.Lambda[L], draw.alpha[L], 1.0 / draw.sigma2[L]
    cons = build_constraints(level_columns, {}, codes, {s: r for r, s in enumerate(sources)})
    PL = prec[:, None] * lam
    W = np.linalg.inv(np.eye(k) + lam.T @ PL)
    W = 0.5 * (W + W.T)
    chol = np.linalg.cholesky(W)
    streams = seed_streams(stream_seed, L.size)
    Zl = np.zeros((L.size, m))
    for _ in range(steps):
        Ml = lam @ etaT
        Ml += alpha[:, None]
        draw_latent(Zl, Ml, np.sqrt(draw.sigma2[L]), cons, streams)
        etaT = (PL @ W).T @ (Zl - alpha[:, None]) + chol @ rng.standard_normal((k, m))
    return etaT


def uniforms(z: np.ndarray) -> np.ndarray:
    """Phi(z), kept inside (0, 1)."""
    return np.clip(special.ndtr(z), 1e-12, 1.0 - 1e-12)
