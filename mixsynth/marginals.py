"""Marginal distributions F_j of the copula columns: synthetic y = F_j^{-1}(u), u = Phi(z).

`EmpiricalMarginal` (binary, ordinal, count columns) returns observed values only;
`SmoothedMarginal` (continuous columns) returns new numbers from a kernel-smoothed CDF,
keeping frequent exact values (atoms, e.g. zero incomes, and the heaps of a heaped column)
exact. Both save to a small
JSON-able dict plus named float arrays (`to_state`) and reload with `marginal_from_state`,
so a fitted model never needs pickle and never stores the raw confidential column.
Error messages never quote data values.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import oaconvolve
from scipy.special import ndtr

_GRID_CELLS = 4096        # stored CDF grid: every cell holds < 1/4096 of the mass or is one lattice step
_STEPS_PER_BANDWIDTH = 32  # lattice step of the smoothed CDF, in bandwidths (capped by _MAX_LATTICE)
_MAX_LATTICE = 2 ** 21
_KERNEL_REACH = 8.0        # kernels are evaluated within 8 bandwidths; beyond, Phi is 0 or 1
_TAIL = 4.0                # continuous support: [min - 4h, max + 4h], clipped to the bounds
HEAP_MIN_ROWS = 5          # in a heaped column, a value held by this many rows is an atom
HEAPED_SHARE = 0.5         # heaped: at least this share of the rows off the atoms hold such values
UNIQUE_COUNT_SHARE = 0.5   # a count whose values held by one row hold more of its rows is smoothed



def _skewness(x: np.ndarray) -> float:
    """Sample skewness (biased moment estimator) of (n,) values; 0 without spread."""
    d = x - x.mean()
    sd = np.sqrt((d * d).mean())
    return float((d ** 3).mean() / sd ** 3) if sd > 0 else 0.0


def _finite_1d(values, what: str) -> np.ndarray:
    """`values` as a 1-d float array; ValueError if empty or not all finite."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError(f"{what}: no observed values to fit")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: values must be finite; drop missing values first")
    return x


class EmpiricalMarginal:
    """Scaled empirical CDF of a rank column: F(y) = #{y_i <= y} / (n + 1).

    `ppf` only ever returns observed values, and with ``min_rows`` = 2 never a value held by
    one row: such a value's mass goes to the nearest value held by at least ``min_rows`` rows
    (of two at the same distance, the one toward the median), so a respondent's unique
    blood pressure or number of pregnancies is never written to a synthetic file. With no
    value held by that many rows, every value stays.

    Attributes: `values_` (k,) distinct observed values, ascending; `counts_` (k,) int
    counts; `n_` number of observations; `released_` (k,) the value `ppf` returns in
    place of each.
    """

    def __init__(self, values, min_rows: int = 1):
        """`values`: (n,) finite observed codes or numbers (missing values already dropped)."""
        x = _finite_1d(values, "EmpiricalMarginal")
        self.values_, self.counts_ = np.unique(x, return_counts=True)
        self.n_ = int(x.size)
        self.min_rows = int(min_rows)
        self.released_ = _released(self.values_, self.counts_, self.min_rows)

    def cdf(self, y) -> np.ndarray:
        """Scaled ECDF at `y` (any shape) -> same shape, in [0, n/(n+1)]."""
        cum = np.concatenate(([0], np.cumsum(self.counts_)))
        return cum[np.searchsorted(self.values_, np.asarray(y, dtype=float), side="right")] / (self.n_ + 1)

    def ppf(self, u) -> np.ndarray:
        """Quantiles for probabilities `u` in [0, 1] (any shape) -> same shape.

        Returns the r-th order statistic, r = ceil(u (n + 1)) clipped to [1, n]: the smallest
        observed value whose scaled ECDF reaches u. A 1e-6 slack on u (n + 1) absorbs the
        rounding of u = r / (n + 1).
        """
        u = np.asarray(u, dtype=float)
        r = np.clip(np.ceil(u * (self.n_ + 1) - 1e-6), 1, self.n_)
        return self.released_[np.searchsorted(np.cumsum(self.counts_), r, side="left")]

    def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(JSON-able meta, float arrays {'values': (k,), 'counts': (k,)})."""
        return ({"kind": "empirical", "n": self.n_, "min_rows": self.min_rows},
                {"values": self.values_.copy(), "counts": self.counts_.astype(float)})


def _released(values: np.ndarray, counts: np.ndarray, min_rows: int) -> np.ndarray:
    """(k,) each distinct value, or for one held by fewer than ``min_rows`` rows the nearest
    held by at least that many (ties toward the median); ``values`` unchanged when none is."""
    kept = values[counts >= min_rows]
    if kept.size in (0, values.size):
        return values.copy()
    median = values[np.searchsorted(np.cumsum(counts), counts.sum() / 2)]
    pos = np.searchsorted(kept, values)   # the first kept value at or above each
    below, above = kept[np.maximum(pos - 1, 0)], kept[np.minimum(pos, kept.size - 1)]
    d_below = np.where(pos > 0, values - below, np.inf)
    d_above = np.where(pos < kept.size, above - values, np.inf)
    toward = np.where(values < median, above, below)
    out = np.where(d_below < d_above, below, np.where(d_above < d_below, above, toward))
    return np.where(counts >= min_rows, values, out)


class SmoothedMarginal:
    """Continuous marginal: exact atoms plus a reflected Gaussian-kernel-smoothed CDF.

    A value held by at least `atom_share` of the n observed rows is an atom (mass count/n,
    returned exactly). So is, in a heaped column (at least HEAPED_SHARE of the other rows
    hold a value that HEAP_MIN_ROWS or more rows hold: weights rounded to the pound, wages to the
    dollar, prices set per state), every value held by HEAP_MIN_ROWS rows or more: smoothing
    the heaps spreads synthetic values into the gaps between them, where no real value lies,
    and a classifier told the files apart by that alone (NC births' birth weights). A value
    held by fewer rows is never returned as such. The other m values get the kernel CDF with Silverman's rule
    h = 0.9 * min(sd, IQR / 1.34) * m^(-1/5) (sd with ddof=1; sd alone if the IQR is 0),
    unless `bandwidth` is given. Kernels are reflected at finite `lower` / `upper`, and the
    continuous support is [min - 4h, max + 4h] clipped to the bounds, so draws stay inside
    them. With fewer than 2 distinct non-atom values every value is an atom.

    With `scale="log"` (positive values only) the kernel smooths log(y), so the smoothing is
    relative: a right-skewed column such as a wage keeps its lower tail near its smallest
    values instead of spreading mass from a bandwidth set by the heavy upper tail down to
    the lower bound. `bandwidth` is then in log units.

    The smoothed CDF is computed on a lattice of step h/32 (at most 2^21 nodes, coarser for
    extremely heavy tails) by linear binning and convolution, then thinned to a grid whose
    cells each hold < 1/4096 of the mass or are one lattice step wide; `ppf` and `cdf`
    interpolate linearly on it (CDF error < 1/4096; in the bulk, position error far below h).

    Attributes: `bandwidth_` (h in data units, None without continuous part), `atoms_` (a,)
    ascending, `atom_probs_` (a,), `continuous_weight_` (m/n), `grid_y_` / `grid_cdf_` the
    mixture CDF table (each atom appears twice: left limit, then value).
    """

    def __init__(self, values, lower=None, upper=None, atom_share=0.05, bandwidth=None, scale="linear"):
        """`values`: (n,) finite observed numbers; `lower`/`upper`: support bounds or None;
        `scale`: "linear" or "log" (the scale the kernel smooths on)."""
        x = _finite_1d(values, "SmoothedMarginal")
        if scale not in ("linear", "log"):
            raise ValueError("SmoothedMarginal: scale must be 'linear' or 'log'")
        if scale == "log" and (np.any(x <= 0) or (upper is not None and upper <= 0)):
            raise ValueError("SmoothedMarginal: scale 'log' needs positive values")
        self.scale = scale
        self.lower = -np.inf if lower is None else float(lower)
        self.upper = np.inf if upper is None else float(upper)
        if np.any(x < self.lower) or np.any(x > self.upper):
            raise ValueError("SmoothedMarginal: observed values fall outside [lower, upper]")
        if bandwidth is not None and not bandwidth > 0:
            raise ValueError("SmoothedMarginal: bandwidth must be positive")
        self.atom_share = float(atom_share)
        self.n_ = int(x.size)

        distinct, counts = np.unique(x, return_counts=True)
        is_atom = counts >= self.atom_share * self.n_
        common = ~is_atom & (counts >= HEAP_MIN_ROWS)
        if counts[common].sum() >= HEAPED_SHARE * counts[~is_atom].sum():   # heaped: heaps come back exact
            is_atom |= common
        rest = np.sort(x[~np.isin(x, distinct[is_atom])])
        if np.unique(rest).size < 2:
            is_atom[:] = True
            rest = rest[:0]
        self.atoms_ = distinct[is_atom]
        self.atom_probs_ = counts[is_atom] / self.n_
        self.continuous_weight_ = rest.size / self.n_

        if rest.size and scale == "log":
            logs = np.log(rest)
            self.bandwidth_ = float(bandwidth) if bandwidth is not None else _silverman(logs)
            grid_y, grid_g = _smoothed_cdf_grid(logs, self.bandwidth_, _log_bound(self.lower),
                                                _log_bound(self.upper))
            grid_y = np.exp(grid_y)
        elif rest.size:
            self.bandwidth_ = float(bandwidth) if bandwidth is not None else _silverman(rest)
            grid_y, grid_g = _smoothed_cdf_grid(rest, self.bandwidth_, self.lower, self.upper)
        else:
            self.bandwidth_ = None
            grid_y = grid_g = np.empty(0)
        self.grid_y_, self.grid_cdf_ = _mixture_table(grid_y, grid_g, self.atoms_, self.atom_probs_,
                                                      self.continuous_weight_)

    def cdf(self, y) -> np.ndarray:
        """Mixture CDF at `y` (any shape) -> same shape, in [0, 1] (right-continuous at atoms)."""
        return _interpolate(y, self.grid_y_, self.grid_cdf_, "right")

    def ppf(self, u) -> np.ndarray:
        """Quantiles for probabilities `u` in [0, 1] (any shape) -> same shape, in data units.

        u inside an atom's mass returns exactly the atom value; otherwise the smoothed CDF is
        inverted by linear interpolation on the grid.
        """
        return _interpolate(u, self.grid_cdf_, self.grid_y_, "left")

    def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(JSON-able meta, float arrays 'atoms', 'atom_probs' (a,), 'grid_y', 'grid_cdf' (g,))."""
        meta = {"kind": "smoothed", "n": self.n_,
                "lower": None if np.isinf(self.lower) else self.lower,
                "upper": None if np.isinf(self.upper) else self.upper,
                "atom_share": self.atom_share, "bandwidth": self.bandwidth_, "scale": self.scale,
                "continuous_weight": float(self.continuous_weight_)}
        arrays = {"atoms": self.atoms_.copy(), "atom_probs": self.atom_probs_.copy(),
                  "grid_y": self.grid_y_.copy(), "grid_cdf": self.grid_cdf_.copy()}
        return meta, arrays


def _interpolate(x, xs: np.ndarray, ys: np.ndarray, side: str) -> np.ndarray:
    """The piecewise-linear function through (xs, ys), both (g,) with xs ascending, at `x`
    (any shape) -> same shape, constant beyond the ends. At a repeated xs (a vertical step)
    `side` "right" gives the step's top, "left" its bottom: so the CDF is right-continuous at
    an atom, and a probability inside an atom's mass gives the atom."""
    x = np.asarray(x, dtype=float)
    k = np.clip(np.searchsorted(xs, x, side=side), 1, xs.size - 1)
    width = xs[k] - xs[k - 1]
    t = np.clip((x - xs[k - 1]) / np.where(width > 0, width, 1.0), 0.0, 1.0)
    return ys[k - 1] + t * (ys[k] - ys[k - 1])


def _log_bound(b: float) -> float:
    """A support bound on the log scale (a bound at or below 0 bounds nothing there)."""
    return np.log(b) if b > 0 else -np.inf


def _silverman(x: np.ndarray) -> float:
    """Silverman's bandwidth 0.9 * min(sd, IQR/1.34) * m^(-1/5) of (m,) values; sd if IQR is 0."""
    sd = float(np.std(x, ddof=1))
    q25, q75 = np.percentile(x, [25, 75])
    spread = min(sd, (q75 - q25) / 1.34) if q75 > q25 else sd
    return float(0.9 * spread * x.size ** -0.2)


def _smoothed_cdf_grid(x: np.ndarray, h: float, lower: float, upper: float):
    """Reflected Gaussian-kernel CDF of sorted (m,) `x` with bandwidth `h`, as (grid_y, cdf).

    The antiderivative sum_i Phi((y - p_i)/h) over data and reflected points p_i is
    computed on a lattice over [lo, hi] by linear binning and convolution with the Phi
    kernel, normalised to run from 0 at lo to 1 at hi, then thinned to about 3 * 4096 nodes.
    """
    lo, hi = max(x[0] - _TAIL * h, lower), min(x[-1] + _TAIL * h, upper)
    n_lat = int(min(np.ceil((hi - lo) * _STEPS_PER_BANDWIDTH / h), _MAX_LATTICE - 1)) + 1
    step = (hi - lo) / (n_lat - 1)
    reach = int(np.ceil(_KERNEL_REACH * h / step))

    points = [x] + [2.0 * b - x for b in (lower, upper) if np.isfinite(b)]
    # positions on an extended lattice of n_lat + 2 reach nodes starting at lo - reach*step;
    # points beyond it add a constant 1 or 0 on [lo, hi], which the normalisation removes
    pos = (np.concatenate(points) - lo) / step + reach
    n_ext = n_lat + 2 * reach
    pos = pos[(pos >= 0) & (pos <= n_ext - 1)]
    left = np.minimum(np.floor(pos).astype(np.int64), n_ext - 2)
    frac = pos - left
    weights = (np.bincount(left, 1.0 - frac, minlength=n_ext)
               + np.bincount(left + 1, frac, minlength=n_ext))

    kernel = ndtr(np.arange(-reach, reach + 1) * step / h)
    below = np.concatenate(([0.0], np.cumsum(weights)))[:n_lat]   # nodes more than reach below
    anti = oaconvolve(weights, kernel)[2 * reach: 2 * reach + n_lat] + below
    cdf = np.maximum.accumulate(np.clip((anti - anti[0]) / (anti[-1] - anti[0]), 0.0, 1.0))
    grid = lo + step * np.arange(n_lat)
    grid[-1] = hi

    keep = np.zeros(n_lat, dtype=bool)
    keep[np.round(np.linspace(0, n_lat - 1, _GRID_CELLS + 1)).astype(np.int64)] = True
    level = np.floor(cdf * _GRID_CELLS)
    crossing = np.flatnonzero(np.diff(level))
    keep[crossing] = keep[crossing + 1] = True
    return grid[keep], cdf[keep]


def _mixture_table(grid_y, grid_g, atoms, probs, weight):
    """Mixture CDF table (y, F), both (g,) ascending, of atoms plus weight * continuous CDF.

    Each atom a contributes the nodes (a, F(a-)) and (a, F(a)); grid nodes equal to an atom
    are dropped. F runs from 0 to exactly 1.
    """
    below = np.concatenate(([0.0], np.cumsum(probs)))
    g_at_atoms = np.interp(atoms, grid_y, grid_g) if grid_y.size else np.zeros(atoms.size)
    off_atom = ~np.isin(grid_y, atoms)
    gy, gg = grid_y[off_atom], grid_g[off_atom]
    f_left = weight * g_at_atoms + below[:-1]
    y = np.concatenate((gy, atoms, atoms))
    f = np.concatenate((weight * gg + below[np.searchsorted(atoms, gy, side="left")],
                        f_left, f_left + probs))
    order = np.lexsort((f, y))
    y, f = y[order], f[order]
    return y, f / f[-1]


def marginal_from_state(meta: dict, arrays: dict[str, np.ndarray]) -> EmpiricalMarginal | SmoothedMarginal:
    """Rebuild the marginal saved by `to_state` (same ppf/cdf outputs) without refitting."""
    if meta["kind"] == "empirical":
        marginal = EmpiricalMarginal.__new__(EmpiricalMarginal)
        marginal.values_ = np.asarray(arrays["values"], dtype=float)
        marginal.counts_ = np.asarray(arrays["counts"]).astype(np.int64)
        marginal.n_ = int(meta["n"])
        marginal.min_rows = int(meta.get("min_rows", 1))
        marginal.released_ = _released(marginal.values_, marginal.counts_, marginal.min_rows)
        return marginal
    if meta["kind"] == "smoothed":
        marginal = SmoothedMarginal.__new__(SmoothedMarginal)
        marginal.lower = -np.inf if meta["lower"] is None else float(meta["lower"])
        marginal.upper = np.inf if meta["upper"] is None else float(meta["upper"])
        marginal.atom_share = float(meta["atom_share"])
        marginal.scale = meta.get("scale", "linear")
        marginal.n_ = int(meta["n"])
        marginal.bandwidth_ = meta["bandwidth"]
        marginal.continuous_weight_ = float(meta["continuous_weight"])
        marginal.atoms_ = np.asarray(arrays["atoms"], dtype=float)
        marginal.atom_probs_ = np.asarray(arrays["atom_probs"], dtype=float)
        marginal.grid_y_ = np.asarray(arrays["grid_y"], dtype=float)
        marginal.grid_cdf_ = np.asarray(arrays["grid_cdf"], dtype=float)
        return marginal
    raise ValueError("unknown marginal kind in saved state")


def fit_marginal(values, kind: str, lower=None, upper=None) -> EmpiricalMarginal | SmoothedMarginal:
    """Fit the marginal of one column: (n,) values, NaN = missing and dropped.

    kind "continuous" -> SmoothedMarginal(values, lower, upper), smoothing on the log scale
    when every value is positive and the logs are less skewed than the values (in absolute
    sample skewness), e.g. incomes and wages: a kernel of one bandwidth across the range
    would smear the small values, whose logs analysts model; kind "date" (days since 1970) -> the same on the
    linear scale; any other kind (binary, ordinal, count) -> EmpiricalMarginal (bounds ignored).
    """
    x = np.asarray(values, dtype=float).ravel()
    x = x[~np.isnan(x)]
    if kind == "date":
        return SmoothedMarginal(x, lower=lower, upper=upper)
    if kind == "continuous" or not returns_real_values(x, kind):
        skewed = x.size > 2 and np.all(x > 0) and abs(_skewness(np.log(x))) < abs(_skewness(x))
        return SmoothedMarginal(x, lower=lower, upper=upper, scale="log" if skewed else "linear")
    return EmpiricalMarginal(x, min_rows=2)


def returns_real_values(x: np.ndarray, kind: str) -> bool:
    """Whether ``fit_marginal`` gives a column of this kind and these (n,) observed values an
    EmpiricalMarginal (synthetic values are real values): binary, ordinal, and a count
    unless values held by one row hold more than UNIQUE_COUNT_SHARE of its rows (a wage in
    whole dollars: the smoothed marginal, rounded, instead of every respondent's own)."""
    if kind not in ("binary", "ordinal", "count"):
        return False
    if kind != "count" or x.size == 0:
        return True
    _, counts = np.unique(x, return_counts=True)
    return counts[counts == 1].size <= UNIQUE_COUNT_SHARE * x.size
