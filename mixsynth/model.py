"""The synthesizer: fit the copula to a table and draw synthetic tables from it.

A fit has three stages, each of which can run on its own (the pipeline runs each as an asset,
every chain as its own step): ``fit_marginals`` (the layout of layout.py, the number of
factors, the marginals and the categorical joint), the chains (``run_chain`` per chain, then
``set_chains``) and ``fit_responses`` (BART, responses/). ``sample`` draws synthetic tables
(synthetic.py); model_file.py saves and loads a model.

The fitted model holds thinned posterior draws of alpha, Lambda and sigma^2 (never the
latent Z), the marginals and the categorical joint. Marginals and joint hold real values
and combinations, so a saved model is confidential: keep it in the confidential store.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .checkpoint import CheckpointFolder
from .config import RunConfig, SamplerSettings
from .diagnostics import convergence, copula_correlation, judged_entries
from .encode import level_codes, rank_column_values
from .guards import bart_seconds, check_layout
from .constraints import initial_latent
from .layout import fit_layout
from .marginals import fit_marginal
from .responses import CategoricalResponse, Design, ResponseModel, Rows, continuation_rows, fit_any
from .rules import check_rules
from .sampler import choose_factors, run_chain, run_chains, stack_chains
from .subsample import copula_rows
from .schema import TableSpec, from_codes, infer_spec, to_codes
from .synthesis import CategoricalJoint, Draw
from .synthetic import row_hashes, sample_files, sample_table
from .tableio import InputError
from .workers import cores, map_in_processes

PARALLEL_RESPONSE_ROWS = 20_000  # rows x responses above which BART fits run in processes
                                 # (a spawned process costs a few seconds to start)


class CopulaSynthesizer:
    """Extended rank-probit Gaussian copula synthesizer (``config.method`` "rpl"), or the
    paper's RL baseline on the same code path ("rl").

    Parameters: ``spec`` (a TableSpec, or None to infer one from the data at fit),
    ``config`` (a RunConfig; a SamplerSettings alone means the defaults for the rest),
    ``seed`` (int; the same seed gives the same model), ``workers`` (processes for chains
    and BART fits; None = one per core, at most one per job).

    The responses (``config.responses``) leave the copula and are modelled by rank-likelihood
    BART given the copula columns and the responses before them (responses/). Columns that
    are a function of another column leave the model too, and are looked up from their
    source at synthesis (derived.py).

    Fitted attributes: ``layout_`` (layout.Layout; ``spec_``, ``columns_``, ``derived_``,
    ``refined_`` and ``screen_`` read it), ``factors_``, ``draws_`` (alpha (C, T, p), Lambda
    (C, T, p, k), sigma2 (C, T, p)), ``marginals_``, ``joint_``, ``row_hashes_``,
    ``responses_`` (ResponseModel, or CategoricalResponse, per response), ``n_rows_``,
    ``copula_rows_`` (the rows the copula was fitted on: about ``settings.rows``, or n_rows_
    when the file has no more; subsample.py), ``convergence_``, ``response_fits_`` (the
    BART fits ahead, for the time estimate: ``_response_fits``).
    """

    def __init__(self, spec: TableSpec | None = None, config: RunConfig | SamplerSettings | None = None,
                 seed: int = 0, workers: int | None = None):
        self.spec = spec
        self.config = config if isinstance(config, RunConfig) else RunConfig(sampler=config or SamplerSettings())
        self.seed = seed
        self.workers = workers

    @property
    def settings(self) -> SamplerSettings:
        return self.config.sampler

    @property
    def method(self) -> str:
        return self.config.method

    spec_ = property(lambda self: self.layout_.spec)
    columns_ = property(lambda self: list(self.layout_.columns))
    derived_ = property(lambda self: list(self.layout_.derived))
    refined_ = property(lambda self: list(self.layout_.refined))
    screen_ = property(lambda self: self.layout_.screen)

    def fit(self, frame: pd.DataFrame, monitor=None, checkpoints: CheckpointFolder | None = None) -> "CopulaSynthesizer":
        """Fit to ``frame``; ``monitor(done_per_chain)`` sees sampling progress; with
        ``checkpoints`` each chain saves its state there and resumes from it (checkpoint.py).

        The same as the staged fit ``fit_marginals``, ``run_chain`` for each chain (in
        parallel processes here), ``set_chains``, ``fit_responses``: both give the same model
        for the same seed. Sets ``stage_seconds_``: wall seconds of "marginals" (with the
        screen), "chains" (with their diagnostics) and "responses" (BART).
        """
        t0 = time.perf_counter()
        cons = self._fit_marginals(frame)
        if hasattr(monitor, "before_sampling"):  # e.g. the command line's cost estimate
            monitor.before_sampling(self)
        t1 = time.perf_counter()
        self.set_chains(run_chains(cons, self.factors_, self.settings, self.seed, self.workers, monitor,
                                   judged_entries(self.columns_), checkpoints))
        t2 = time.perf_counter()
        self.fit_responses(frame)
        self.stage_seconds_ = {"marginals": t1 - t0, "chains": t2 - t1, "responses": time.perf_counter() - t2}
        return self

    def fit_marginals(self, frame: pd.DataFrame) -> "CopulaSynthesizer":
        """First stage: the layout (with ``responses: auto``, the screen that chooses the
        BART responses), the number of factors, the marginals and the categorical joint.
        Sets ``layout_``, ``factors_``, ``n_rows_``, ``marginals_``, ``joint_``, ``row_hashes_``."""
        self._fit_marginals(frame)
        return self

    def _fit_marginals(self, frame: pd.DataFrame):
        """fit_marginals; returns the constraints the data put on the latent columns, which
        the chains sample under (confidential: never kept on the model)."""
        spec = self.spec or infer_spec(frame)
        self.config.check_responses(spec)
        values = to_codes(frame, spec)
        layout = fit_layout(spec, values, self.config.responses, self.method, self.seed)
        check_layout(len(frame), layout.columns)
        if self.config.synthesis.rules:
            check_rules(frame, self.config.synthesis.rules)
        self.layout_, self.n_rows_ = layout, len(frame)
        cons = self._copula_constraints(values)
        self.factors_ = self.settings.factors or choose_factors(initial_latent(cons), self.settings.factor_variance)
        self.marginals_ = {}
        for c in layout.columns:
            if c.role == "level":
                continue
            col = spec.column(c.source)
            kind = col.kind if c.role == "value" else "binary"
            self.marginals_[c.name] = fit_marginal(rank_column_values(c, values), kind, col.lower, col.upper)
        for name in layout.responses:
            col = spec.column(name)
            self.marginals_[name] = fit_marginal(values[name], col.kind, col.lower, col.upper)
        sources = layout.sources
        self.joint_ = CategoricalJoint.from_codes(
            level_codes(values, sources), [len(spec.column(s).levels) for s in sources])
        self.row_hashes_ = row_hashes(from_codes(values, spec))
        self.response_fits_ = self._response_fits(values)
        return cons

    def run_chain(self, frame: pd.DataFrame, chain: int, progress=None, checkpoint=None) -> dict[str, np.ndarray]:
        """Second stage, one chain (after ``fit_marginals``): its kept draws, alpha (T, p),
        Lambda (T, p, k), sigma2 (T, p). Chain ``c`` gets the seed ``fit`` gives it, so
        chains run anywhere (separate processes, separate machines) combine into the same
        model. ``progress(sweeps_done)`` is called every few sweeps; with a ``checkpoint``
        (checkpoint.Checkpoint) the chain saves its state there and resumes from it."""
        if not 0 <= chain < self.settings.chains:
            raise InputError(f"chain must be between 0 and {self.settings.chains - 1}")
        seed = np.random.SeedSequence(self.seed).spawn(self.settings.chains)[chain]
        return run_chain(self.constraints(frame), self.factors_, self.settings, seed, progress, judged_entries(self.columns_),
                         checkpoint)

    def constraints(self, frame: pd.DataFrame):
        """The constraints the copula rows of ``frame`` put on the latent columns, which the
        chains sample under (constraints.Constraints; confidential, never kept on the model)."""
        return self._copula_constraints(to_codes(frame, self.spec_))

    def _copula_values(self, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The model values (column -> (n,)) of the rows the copula is fitted on: every row,
        or the subsample ``settings.rows`` asks for (subsample.copula_rows). Sets
        ``copula_rows_``. BART's responses see every row (up to ``bart.max_rows``)."""
        rows = None
        if self.settings.rows is not None:
            rows = copula_rows(self.layout_.constraints(values), self.settings.rows, self.seed)
        if rows is None:
            self.copula_rows_ = len(next(iter(values.values())))
            return values
        self.copula_rows_ = int(rows.size)
        return {name: v[rows] for name, v in values.items()}

    def _copula_constraints(self, values: dict[str, np.ndarray]):
        return self.layout_.constraints(self._copula_values(values))

    def set_chains(self, chains) -> "CopulaSynthesizer":
        """Keep the draws of every chain: a dict of arrays stacked over chains (C, T, ...)
        or a list of ``run_chain`` results in chain order. Sets ``draws_`` and
        ``convergence_`` (R-hat and ESS of C)."""
        if not isinstance(chains, dict):
            chains = stack_chains(chains)
        self.draws_ = {key: chains[key] for key in ("alpha", "Lambda", "sigma2")}
        self.convergence_ = convergence(chains["Lambda"], chains["sigma2"], self.columns_)
        self.convergence_["rows"] = self.copula_rows_
        if "sweeps" in chains:
            self.convergence_["sweeps_per_chain"] = [int(x) for x in chains["sweeps"]]
        if "stopped" in chains:
            self.convergence_["stopped_by_time_budget"] = int(np.sum(chains["stopped"]))
        return self

    def fit_responses(self, frame: pd.DataFrame) -> "CopulaSynthesizer":
        """Last stage: rank-likelihood BART (probit BART for a binary, continuation-ratio
        probit BART for an unordered categorical) for each response given the copula
        columns and the responses before it. The fits are independent (each sees real
        values only), so they run in up to ``workers`` processes once the rows times
        responses make that pay (PARALLEL_RESPONSE_ROWS). Sets ``responses_``."""
        values, responses = to_codes(frame, self.spec_), self.layout_.responses
        seeds = np.random.SeedSequence([self.seed, 1]).spawn(len(responses))
        jobs = [(name, values[name], Rows(design, {f: values[f] for f in design.features}), design,
                 self.config.bart, s, kind) for (name, design, kind), s in zip(self._response_designs(values), seeds)]
        workers = min(len(jobs), self.workers or cores())
        if workers < 2 or len(frame) * len(jobs) < PARALLEL_RESPONSE_ROWS:
            self.responses_: list[ResponseModel | CategoricalResponse] = [fit_any(*job) for job in jobs]
        else:
            self.responses_ = map_in_processes(fit_any, jobs, workers)
        return self

    def response_seconds(self) -> float:
        """Expected wall seconds of ``fit_responses`` (guards.bart_seconds), once
        ``fit_marginals`` has run; 0 with no response."""
        fits = self.response_fits_
        if not fits:
            return 0.0
        workers = min(len(fits), self.workers or cores())
        return bart_seconds(fits, workers, self.n_rows_ * len(fits) >= PARALLEL_RESPONSE_ROWS)

    def _response_designs(self, values: dict[str, np.ndarray]) -> list[tuple[str, Design, str]]:
        """(name, BART features, kind for fit_any) of each response: the copula columns and
        the responses before it."""
        responses, spec = self.layout_.responses, self.layout_.copula_spec
        base = [c.name for c in spec.columns if c.name not in responses]
        unordered = {c.name: len(c.levels) for c in spec.columns if c.modelled_as == "categorical"}
        out = []
        for i, name in enumerate(responses):
            col = spec.column(name)
            out.append((name, Design.from_values(values, base + list(responses[:i]), unordered),
                        "categorical" if col.modelled_as == "categorical" else col.kind))
        return out

    def _response_fits(self, values: dict[str, np.ndarray]) -> list[list[tuple[bool, int, int, int]]]:
        """The BART fits ``fit_responses`` will run, for its time estimate: per response, the
        (probit, rows, numeric features, one-hot features) of each fit (a categorical's
        continuation-ratio parts; rows capped at ``bart.max_rows``)."""
        cap = self.config.bart.max_rows
        out = []
        for name, design, kind in self._response_designs(values):
            u, v = sum(k == 0 for k in design.levels), sum(design.levels)
            y = values[name]
            if kind == "categorical":
                rows = continuation_rows(y[~np.isnan(y)])
                out.append([(True, int(min(r, cap)), u, v) for r in rows])
            else:
                out.append([(kind == "binary", int(min(y.size, cap)), u, v)])
        return out

    def response_summary(self) -> dict:
        """Which columns BART models and why, for reports and records (aggregates only):
        layout.Layout.summary and the link of each fitted response."""
        summary = self.layout_.summary()
        links = {m.name: m.link for m in getattr(self, "responses_", [])}
        return {**{k: summary[k] for k in ("modelled", "chosen_by", "derived", "refined")}, "links": links,
                "summary": summary["summary"], "screen": summary["screen"]}

    def implications(self) -> list[str]:
        """The skip patterns the synthetic file keeps exactly (layout.Layout.implications)."""
        return self.layout_.implications()

    def stages(self) -> list[str]:
        """The fitted stages, in fit order: "marginals", "copula", "responses"."""
        have = {"marginals": hasattr(self, "joint_"), "copula": hasattr(self, "draws_"),
                "responses": hasattr(self, "responses_")}
        return [stage for stage, done in have.items() if done]

    @property
    def n_draws_(self) -> int:
        return self.draws_["alpha"].shape[0] * self.draws_["alpha"].shape[1]

    def correlation(self, quantile: float | None = None) -> pd.DataFrame:
        """The copula correlation C between every pair of latent columns (each category
        level, each variable, each missingness indicator): its posterior mean, or the given
        posterior quantile. Shape (p, p), labelled by latent column names."""
        C = copula_correlation(self.draws_["Lambda"], self.draws_["sigma2"]).reshape(
            -1, len(self.columns_), len(self.columns_))
        value = C.mean(axis=0) if quantile is None else np.quantile(C, quantile, axis=0)
        names = [c.name for c in self.columns_]
        return pd.DataFrame(value, index=names, columns=names)

    def draw(self, index: int) -> Draw:
        """Posterior draw ``index`` of the pooled chains."""
        c, t = divmod(index, self.draws_["alpha"].shape[1])
        return Draw(self.draws_["alpha"][c, t], self.draws_["Lambda"][c, t], self.draws_["sigma2"][c, t])

    def sample(self, n_rows: int | None = None, seed: int = 0, draw: int | None = None, **options):
        """One synthetic table (synthetic.sample_table: the options, the info it returns)."""
        return sample_table(self, n_rows, seed, draw, **options)

    def sample_files(self, m: int, n_rows: int | None = None, seed: int = 0, **options) -> list[pd.DataFrame]:
        """The m files of a release from m posterior draws (synthetic.sample_files)."""
        return sample_files(self, m, n_rows, seed, **options)

    def sample_release(self, seed: int) -> list[pd.DataFrame]:
        """The files ``config.synthesis`` asks for (m files of ``rows`` rows)."""
        s = self.config.synthesis
        return self.sample_files(s.m, s.rows, seed, **s.options())

    def save(self, path) -> None:
        """Write the fitted model to one ``.npz`` file (model_file.save_model)."""
        from .model_file import save_model
        save_model(self, path)

    @classmethod
    def load(cls, path) -> "CopulaSynthesizer":
        """Read a model written by ``save`` (model_file.load_model)."""
        from .model_file import load_model
        return load_model(path)
