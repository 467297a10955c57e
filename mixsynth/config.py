"""Every setting of a run, typed: built and checked once, from the spec and the command line,
before any chain starts.

A spec's ``sampler:``, ``responses:``, ``bart:``, ``synthesis:`` and ``release:`` sections
become one ``RunConfig``; command-line flags (``--sweeps``, ``--chains``, ``--method``,
``--m``, ``--rows`` ...) override the spec. The model file and a pipeline wave store it once
(``to_dict``), and everything downstream reads that copy.

The run-length rule (``SamplerSettings.from_dict``): a ``sweeps`` given without ``burn_in``
burns in half of it, without ``thin`` keeps RUN_DRAWS draws a chain, and is run in full
(no early stop) unless ``until_converged: true`` says otherwise. Flags and spec are two
levels: a ``--sweeps`` flag brings its own burn-in and thinning, not the spec's.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from . import workers
from .tableio import InputError, did_you_mean

RUN_DRAWS = 500          # kept draws a chain when a run length is given without `thin`
COPULA_ROWS = 5_000      # rows the copula is fitted on by default (subsample.py; benchmarks/RESULTS.md)
MIN_COPULA_ROWS = 1_000  # the fewest a spec may ask for
CHAIN_MINUTES = 60.0     # wall-clock minutes after which a chain stops by default
MAX_DEFAULT_CHAINS = 8   # chains by default: one per core, at least 2 (R-hat), at most this
FIRST_ROUND_SWEEPS = 2_000  # the shortest run a chain may stop after (until_converged)
METHODS = ("rpl", "rl")
MAX_RESPONSE_LEVELS = 8  # a categorical of more levels stays in the copula (one probit forest a level)
SAMPLER_FLAGS = ("sweeps", "burn_in", "thin", "chains", "factors", "minutes")
SYNTHESIS_FLAGS = ("rows", "m")


def chain_slots() -> int | None:
    """The chains a deployment runs at once across its workers, ``MIXSYNTH_CHAIN_SLOTS``
    (the celery executor: each chain is a task, so the workers' cores, not this process's,
    bound them); None when unset."""
    raw = os.environ.get("MIXSYNTH_CHAIN_SLOTS", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(f"MIXSYNTH_CHAIN_SLOTS must be a whole number of at least 1 (the chains your "
                         f"workers run at once); got {raw!r}")
    return int(raw)


def default_chains() -> int:
    """One chain per chain slot (``chain_slots``) when a deployment declares them, else per
    core this process may use at most MAX_DEFAULT_CHAINS; at least 2 (R-hat needs two)."""
    slots = chain_slots()
    return max(2, slots if slots is not None else min(MAX_DEFAULT_CHAINS, workers.cores()))


def from_section(cls, section: str, d: dict, **typed):
    """``cls(**d, **typed)`` for a spec section's mapping, refusing keys ``cls`` has not."""
    allowed = [f.name for f in fields(cls)]
    unknown = sorted(set(d) - set(allowed))
    if unknown:
        raise InputError(f"{section}: unknown setting(s) {unknown}; allowed: {sorted(allowed)}")
    return cls(**{**d, **typed})


@dataclass(frozen=True)
class Prior:
    """Hyperparameters of the copula; defaults are the authors' R code's. The full covariance
    structure uses ``alpha_var`` and ``pseudo_rows``, the factor structure the others."""
    nu: float = 3.0
    """degrees of freedom of the local shrinkage phi_jh ~ Gamma(nu/2, nu/2)"""
    a1: float = 2.0
    a2: float = 3.0
    """shapes of delta_1 ~ Gamma(a1, 1) and delta_l ~ Gamma(a2, 1), l >= 2 (a2 > 1: later
    factors shrink)"""
    a_sigma: float = 1.0
    b_sigma: float = 0.3
    """sigma_j^-2 ~ Gamma(a_sigma, rate b_sigma), i.e. sigma^2 ~ IG(1, 0.3)"""
    alpha_var: float = 1.0
    """prior variance of the categorical level intercepts, alpha_j ~ N(0, alpha_var)"""
    pseudo_rows: float = 0.25
    """the full structure's Omega ~ IW(p + 2 + m, (1 + m) I), mean I, is worth
    m = pseudo_rows * sqrt(n) rows of independent latents (0: sbgcop's IW(p + 2, I))"""

    def omega_weight(self, n: int) -> float:
        """m of the full structure's IW(p + 2 + m, (1 + m) I) for n rows."""
        return self.pseudo_rows * float(np.sqrt(n))


@dataclass(frozen=True)
class SamplerSettings:
    """Run length and layout of the MCMC.

    sweeps: total Gibbs sweeps per chain, burn_in of them discarded; thin: keep every
        thin-th sweep after burn-in (64,000, 32,000 and 64: 500 draws a chain); chains:
        independent chains, by default one per core (``default_chains``): ESS adds over
        chains, so more cores give more draws in the same time (a different count gives a
        different file for the same seed: the record states it);
    until_converged: a chain may stop early, after the same run scaled down by a power of
        two (``rounds``), once the draws of that run pass its own check (sampler.run_chain).
        Needs burn_in = sweeps / 2; True by default, False when a spec or the command line
        sets sweeps;
    factors: number of factors k; k >= p* (the latent columns) is the full covariance
        structure. None picks it (sampler.choose_factors) from ``factor_variance``;
    rows: the most rows the copula is fitted on: a larger file's copula is fitted on a
        subsample of about this many rows (subsample.py), its marginals and BART's responses
        on every row (BART up to ``bart.max_rows``); None: every row;
    minutes: wall-clock minutes after which a chain stops where it is, unconverged unless
        its draws say otherwise (sampler.run_chain); None: no limit.
    """
    sweeps: int = 64_000
    burn_in: int = 32_000
    thin: int = 64
    chains: int = field(default_factory=default_chains)
    until_converged: bool = True
    factors: int | None = None
    factor_variance: float = 0.95
    rows: int | None = COPULA_ROWS
    minutes: float | None = CHAIN_MINUTES
    prior: Prior = field(default_factory=Prior)

    def __post_init__(self):
        if not 0 <= self.burn_in < self.sweeps:
            raise InputError("sampler: burn_in must be at least 0 and below sweeps")
        if self.thin < 1 or self.chains < 1:
            raise InputError("sampler: thin and chains must be at least 1")
        if self.rows is not None and not (isinstance(self.rows, int) and self.rows >= MIN_COPULA_ROWS):
            raise InputError(f"sampler: rows must be a whole number of at least {MIN_COPULA_ROWS:,} "
                             f"(or null for every row); got {self.rows!r}")
        if self.minutes is not None and not (isinstance(self.minutes, (int, float)) and self.minutes > 0):
            raise InputError(f"sampler: minutes must be a positive number (or null for no limit); got {self.minutes!r}")

    @property
    def kept(self) -> int:
        """Draws kept per chain."""
        return len(range(self.burn_in, self.sweeps, self.thin))

    def rounds(self) -> list[tuple[int, int, int]]:
        """(sweeps, burn_in, thin) of the runs a chain may stop after, shortest first; the
        last is the full run. Each is the full run divided by a power of two, exactly, with
        burn-in half its sweeps (the shortest at least FIRST_ROUND_SWEEPS), so its draws
        start where the previous run ended."""
        out = [(self.sweeps, self.burn_in, self.thin)]
        if not self.until_converged or 2 * self.burn_in != self.sweeps:
            return out
        f = 2
        while not (self.burn_in % f or self.thin % f) and self.sweeps // f >= FIRST_ROUND_SWEEPS:
            out.insert(0, (self.sweeps // f, self.burn_in // f, self.thin // f))
            f *= 2
        return out

    @property
    def lengths(self) -> list[int]:
        """Sweeps of the runs a chain may stop after (``rounds``), shortest first."""
        return [length for length, _, _ in self.rounds()]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "SamplerSettings":
        """Settings from a ``sampler:`` mapping, with the run-length rule (module docstring)."""
        d = dict(d)
        if "sweeps" in d:
            d.setdefault("burn_in", d["sweeps"] // 2)
            d.setdefault("thin", max(1, (d["sweeps"] - d["burn_in"]) // RUN_DRAWS))
            d.setdefault("until_converged", False)
        prior = from_section(Prior, "sampler.prior", d.pop("prior", None) or {})
        return from_section(cls, "sampler", d, prior=prior)


@dataclass(frozen=True)
class BartSettings:
    """BART settings: 200 trees (the authors'), 50 trees for the error variance, 50 burn-in
    sweeps opened by 5 grow-from-root sweeps, 200 kept draws.

    keep_every: every keep_every-th kept draw's forest is stored for prediction (50 of
        200 by default: the posterior mean of f barely moves);
    variance_trees: trees of the forest for the log error variance of a rank-link
        response (0: one error variance; responses/bart.py: heteroskedastic errors);
    warm_start: grow-from-root sweeps opening the burn-in (stochtree's XBART start);
    rescale: restandardize the latent response after each burn-in sweep (responses/bart.py);
    max_rows: above this many rows, fit on a seeded subsample of them;
    linear: a linear term in the numeric features beside the trees (responses/bart.py).
    """
    trees: int = 200
    burn_in: int = 50
    draws: int = 200
    keep_every: int = 4
    variance_trees: int = 50
    warm_start: int = 5
    alpha: float = 0.95
    beta: float = 2.0
    min_samples_leaf: int = 5
    rescale: bool = True
    max_rows: int = 50_000
    linear: bool = True

    def __post_init__(self):
        if (self.trees < 1 or self.draws < 1 or self.keep_every < 1 or not 0 <= self.warm_start <= self.burn_in
                or self.max_rows < 100 or self.variance_trees < 0):
            raise InputError("bart: trees, draws and keep_every must be at least 1, variance_trees at "
                             "least 0, warm_start between 0 and burn_in, and max_rows at least 100")

    @classmethod
    def from_dict(cls, d: dict) -> "BartSettings":
        return from_section(cls, "bart", d)


@dataclass(frozen=True)
class SynthesisSettings:
    """How synthetic files are drawn from the fitted model (``CopulaSynthesizer.sample``).

    rows: rows a file (None: as the real table); m: files, from m posterior draws;
    prior_strength, min_cell_count: smoothing of the categorical joint
        (synthesis.CategoricalJoint.sample); proposals, gibbs_steps: the draw of the
        factors given a row's categories (synthesis.latent_rows); rules: edit rules
        (``rules.py``) every synthetic row must meet.
    """
    rows: int | None = None
    m: int = 1
    prior_strength: float = 0.0
    min_cell_count: int = 1
    proposals: int = 20
    gibbs_steps: int = 200
    rules: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "rules", tuple(self.rules))
        if self.m < 1 or (self.rows is not None and self.rows < 1):
            raise InputError("synthesis: m and rows must be at least 1")

    def options(self) -> dict:
        """The keyword arguments of ``CopulaSynthesizer.sample`` (all but rows and m)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("rows", "m")}

    def to_dict(self) -> dict:
        """m and rows, and every setting that differs from its default (rules as a list)."""
        given = {f.name: getattr(self, f.name) for f in fields(self)
                 if f.name not in ("rows", "m") and getattr(self, f.name) != f.default}
        return {"m": self.m, "rows": self.rows, **given, **({"rules": list(self.rules)} if self.rules else {})}


@dataclass(frozen=True)
class RunConfig:
    """Every setting of one run (module docstring). ``responses`` is "auto" (the fit's
    screen chooses them), "none", or the column names BART models, in order; ``release``
    the validated ``release:`` section (None: no decision)."""
    sampler: SamplerSettings = field(default_factory=SamplerSettings)
    method: str = "rpl"
    responses: str | tuple[str, ...] = "auto"
    bart: BartSettings = field(default_factory=BartSettings)
    synthesis: SynthesisSettings = field(default_factory=SynthesisSettings)
    release: dict | None = None

    def __post_init__(self):
        if self.method not in METHODS:
            raise InputError(f"sampler: method must be one of {', '.join(METHODS)}; fix it in the spec")
        if not isinstance(self.responses, str):
            object.__setattr__(self, "responses", tuple(self.responses))

    @classmethod
    def from_spec(cls, raw: dict | None, columns=(), flags: dict | None = None) -> "RunConfig":
        """The configuration of a raw spec mapping, with command-line ``flags`` (None values
        ignored) over it. ``columns`` are the spec's ColumnSpecs in input order (for the
        `role: response` alias)."""
        raw, flags = raw or {}, {k: v for k, v in (flags or {}).items() if v is not None}
        sampler = dict(_section(raw, "sampler"))
        if "sweeps" in flags:   # a run length given on the command line brings its own burn-in and thinning
            for key in ("burn_in", "thin", "until_converged"):
                sampler.pop(key, None)
        sampler.update({k: flags[k] for k in SAMPLER_FLAGS if k in flags})
        method = flags.get("method") or sampler.pop("method", "rpl")
        sampler.pop("method", None)
        bart = dict(_section(raw, "bart"))
        order = bart.pop("order", None)
        synthesis = {**_section(raw, "synthesis"), **{k: flags[k] for k in SYNTHESIS_FLAGS if k in flags}}
        release = raw.get("release")
        if release is not None:
            from .report.release import check_release_spec   # the report package loads in seconds
            check_release_spec(release)
        return cls(SamplerSettings.from_dict(sampler), method, _responses(raw.get("responses"), order, columns),
                   BartSettings.from_dict(bart), from_section(SynthesisSettings, "synthesis", synthesis), release)

    def to_dict(self) -> dict:
        """JSON form; ``from_dict`` inverts it."""
        return {"sampler": self.sampler.to_dict(), "method": self.method,
                "responses": self.responses if isinstance(self.responses, str) else list(self.responses),
                "bart": asdict(self.bart), "synthesis": self.synthesis.to_dict(), "release": self.release}

    @classmethod
    def from_dict(cls, d: dict) -> "RunConfig":
        return cls(SamplerSettings.from_dict(d["sampler"]), d["method"], d["responses"],
                   BartSettings(**d["bart"]), SynthesisSettings(**d["synthesis"]), d["release"])

    def bart_given(self) -> dict:
        """The BART settings that differ from the defaults (what a record shows)."""
        return {f.name: getattr(self.bart, f.name) for f in fields(self.bart)
                if getattr(self.bart, f.name) != f.default}

    def check_responses(self, spec) -> None:
        """InputError unless every named response is a modelled column BART can take (an
        ordered or binary column, or a categorical of at most MAX_RESPONSE_LEVELS levels)."""
        if isinstance(self.responses, str):
            return
        for name in self.responses:
            if name not in spec.names:
                raise InputError(f"responses name column '{name}', which is not modelled"
                                 f"{did_you_mean(name, spec.names)}; fix the name in the spec")
            col = spec.column(name)
            if col.modelled_as == "categorical" and len(col.levels) > MAX_RESPONSE_LEVELS:
                raise InputError(f"response '{name}' is a categorical of {len(col.levels)} levels, more than the "
                                 f"{MAX_RESPONSE_LEVELS} BART takes; drop it from the responses")
        if len(set(self.responses)) < len(self.responses):
            raise InputError("responses list a column twice")


def deprecations(raw: dict | None) -> list[str]:
    """One line for each old way of choosing responses the raw spec uses (they still work)."""
    raw = raw or {}
    out = []
    if (_section(raw, "bart")).get("order"):
        out.append("spec: `bart: {order: [...]}` is deprecated; write `responses: [...]` instead")
    decls = raw.get("columns") if isinstance(raw.get("columns"), dict) else {}
    if any(isinstance(d, dict) and d.get("role") == "response" for d in decls.values()):
        out.append("spec: `role: response` is deprecated; list the columns under `responses:` instead")
    return out


def _section(raw: dict, key: str) -> dict:
    """A settings section that must be a mapping (missing/null -> {})."""
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"the `{key}` section must be a mapping; fix it in the spec")
    return value


def _responses(value, order, columns) -> str | tuple[str, ...]:
    """`responses:` ("auto" by default, "none", or a list of names); the deprecated
    `bart.order` list and `role: response` columns (input order) mean a list too."""
    declared = tuple(order or [c.name for c in columns if c.role == "response"])
    if value is None:
        return declared or "auto"
    if declared:
        raise InputError("the spec declares responses twice (`responses:` and a `role: response` column or "
                         "`bart.order`); keep `responses:`")
    if value in ("auto", "none"):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError("`responses` must be auto, none or a list of column names, e.g. [age, wage]")
