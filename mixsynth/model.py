"""The synthesizer: fit the copula to a table, sample synthetic tables, save and load.

The fitted model holds thinned posterior draws of alpha, Lambda and sigma^2 (never the
latent Z), the marginals and the categorical joint. Marginals and joint hold real values
and combinations, so a saved model is confidential: keep it in the confidential store.
"""
import json
import os
import time
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

from .checkpoint import CheckpointFolder
from .derived import Derivation, Refinement, find_derivations, find_refinements
from .diagnostics import convergence, copula_correlation, judged_entries
from .guards import check_layout
from .encode import categorical_sources, encode, level_codes, rank_column_values
from .constraints import initial_latent
from .latent_columns import LatentColumn
from .marginals import fit_marginal, marginal_from_state
from .sampler import SamplerSettings, choose_factors, run_chain, run_chains
from .schema import TableSpec, from_codes, infer_spec, to_codes
from .tableio import InputError, atomic_path, did_you_mean
from .rules import check_rules, rules_hold
from .screen import MAX_RESPONSE_LEVELS, ResponseScreen, regression_outcomes, screen_responses
from .responses import BartSettings, CategoricalResponse, Design, ResponseModel, Rows, fit_any, response_from_state
from .synthesis import CategoricalJoint, Draw, latent_rows, uniforms
from .workers import process_pool

FORMAT = "mixsynth-model/1"
MAX_REDRAWS = 20  # rounds of replacement rows for rows breaking an edit rule or copying a real row
MAX_COPY_SHARE = 0.05  # copies of real rows above this share of a file are inherent to the table: kept, flagged
PARALLEL_RESPONSE_ROWS = 20_000  # rows x responses above which BART fits run in processes
                                 # (a spawned process costs a few seconds to start)


def response_order(spec: TableSpec) -> tuple[str, ...]:
    """The responses in modelling order (``spec.responses``; none for "none"). Each must
    be an ordered or binary column, or a categorical of at most MAX_RESPONSE_LEVELS levels. A spec with ``responses: auto`` is resolved by the
    fit's screen first (``CopulaSynthesizer.spec_``)."""
    if spec.responses == "auto":
        raise ValueError("responses: auto is resolved by the fit; use the fitted model's spec_")
    order = () if spec.responses == "none" else spec.responses
    for name in order:
        if name not in spec.names:
            raise InputError(f"responses name column '{name}', which is not modelled"
                             f"{did_you_mean(name, spec.names)}; fix the name in the spec")
        col = spec.column(name)
        if col.modelled_as == "categorical" and len(col.levels) > MAX_RESPONSE_LEVELS:
            raise InputError(f"response '{name}' is a categorical of {len(col.levels)} levels, more than the "
                             f"{MAX_RESPONSE_LEVELS} BART takes; drop it from the responses")
    if len(set(order)) < len(order):
        raise InputError("responses list a column twice")
    return order


def row_hashes(frame: pd.DataFrame, unique: bool = True) -> np.ndarray:
    """(rows,) uint64 hash of each row of a model-view table (``from_codes``), sorted and
    unique with ``unique``. Kept on the model (confidential, like the joint's cells) so
    synthesis can replace a synthetic row that equals a real one."""
    h = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return np.unique(h) if unique else h


class CopulaSynthesizer:
    """Extended rank-probit Gaussian copula synthesizer (``method="rpl"``), or the paper's
    RL baseline on the same code path (``method="rl"``).

    Parameters: ``spec`` (a TableSpec, or None to infer one from the data at fit),
    ``settings`` (SamplerSettings), ``seed`` (int; the same seed gives the same model),
    ``workers`` (processes for chains; None = one per core, at most one per chain).

    Columns with role ``response`` (in the spec's ``bart: {order: [...]}`` order, else in
    table order) leave the copula and are modelled by rank-likelihood BART given the copula
    columns and the responses before them (responses.py).

    Columns that are a function of another column (a recode, a state's tax beside the state;
    derived.py) leave the model too, and are looked up from their source at synthesis.

    Fitted attributes: ``spec_``, ``columns_`` (latent columns), ``factors_``, ``draws_``
    (alpha (C, T, p), Lambda (C, T, p, k), sigma2 (C, T, p)), ``marginals_``, ``joint_``,
    ``responses_`` (ResponseModel, or CategoricalResponse, per response), ``derived_``
    (Derivation per derived column, in lookup order), ``refined_`` (Refinement per ordered
    column kept consistent with a categorical it determines), ``n_rows_``, ``convergence_``.
    """

    def __init__(self, spec: TableSpec | None = None, settings: SamplerSettings | None = None,
                 method: str = "rpl", seed: int = 0, workers: int | None = None):
        self.spec = spec
        self.settings = settings or SamplerSettings()
        self.method = method
        self.seed = seed
        self.workers = workers

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

    def _encode(self, frame: pd.DataFrame):
        """(spec, model values, latent columns) and the constraints; sets ``derived_``,
        ``refined_`` and, with ``responses: auto``, ``screen_``."""
        spec = getattr(self, "spec_", None) or self.spec or infer_spec(frame)
        values = to_codes(frame, spec)
        declared = () if isinstance(spec.responses, str) else spec.responses
        self.derived_ = find_derivations(spec, values, declared) if spec.derived == "auto" else []
        # a response's values come later, from BART: it is never refined. With ``auto`` the screen
        # chooses no refinement's column but a declared regression outcome, so those are kept out.
        keep = tuple(regression_outcomes(spec)) if spec.responses == "auto" else response_order(spec)
        self.refined_ = find_refinements(spec, values, self.derived_, keep) if spec.derived == "auto" else []
        if spec.responses == "auto":
            linked = {r.name: r.by for r in self.refined_} | {r.by: r.name for r in self.refined_}
            self.screen_ = screen_responses(self._copula_spec(spec), values, self.seed, linked)
            spec = replace(spec, responses=self.screen_.order)
        columns, cons = encode(self._copula_spec(spec), values, self.method, response_order(spec))
        return (spec, values, columns), cons

    def _copula_spec(self, spec: TableSpec) -> TableSpec:
        """``spec`` without the derived columns: the columns the copula and BART model."""
        derived = {d.name for d in self.derived_}
        return replace(spec, columns=tuple(c for c in spec.columns if c.name not in derived))

    def fit_marginals(self, frame: pd.DataFrame) -> "CopulaSynthesizer":
        """First stage: the latent layout, the number of factors, the marginals and the
        categorical joint; with ``responses: auto``, the screen that chooses the BART
        responses. Sets ``spec_`` (its responses resolved), ``screen_`` (a ResponseScreen,
        or None when the spec named its responses), ``columns_``, ``factors_``, ``n_rows_``,
        ``marginals_``, ``joint_``."""
        self._fit_marginals(frame)
        return self

    def _fit_marginals(self, frame: pd.DataFrame):
        """fit_marginals; returns the constraints the data put on the latent columns, which
        the chains sample under (confidential: never kept on the model)."""
        self.screen_ = None
        (spec, values, columns), cons = self._encode(frame)
        check_layout(len(frame), columns)
        if spec.synthesis.get("rules"):
            check_rules(frame, spec.synthesis["rules"])
        self.spec_, self.columns_, self.n_rows_ = spec, columns, len(frame)
        self.factors_ = self.settings.factors or choose_factors(initial_latent(cons),
                                                                self.settings.factor_variance)
        self.marginals_ = {}
        for c in columns:
            if c.role == "level":
                continue
            col = spec.column(c.source)
            kind = col.kind if c.role == "value" else "binary"
            self.marginals_[c.name] = fit_marginal(rank_column_values(c, values), kind,
                                                   col.lower, col.upper)
        for name in response_order(spec):
            col = spec.column(name)
            self.marginals_[name] = fit_marginal(values[name], col.kind, col.lower, col.upper)
        sources = categorical_sources(columns)
        self.joint_ = CategoricalJoint.from_codes(
            level_codes(values, sources), [len(spec.column(s).levels) for s in sources])
        self.row_hashes_ = row_hashes(from_codes(values, spec))
        return cons

    def run_chain(self, frame: pd.DataFrame, chain: int, progress=None, checkpoint=None) -> dict[str, np.ndarray]:
        """Second stage, one chain (after ``fit_marginals``): its kept draws, alpha (T, p),
        Lambda (T, p, k), sigma2 (T, p). Chain ``c`` gets the seed ``fit`` gives it, so
        chains run anywhere (separate processes, separate machines) combine into the same
        model. ``progress(sweeps_done)`` is called every few sweeps; with a ``checkpoint``
        (checkpoint.Checkpoint) the chain saves its state there and resumes from it."""
        if not 0 <= chain < self.settings.chains:
            raise InputError(f"chain must be between 0 and {self.settings.chains - 1}")
        _, cons = self._encode(frame)
        seed = np.random.SeedSequence(self.seed).spawn(self.settings.chains)[chain]
        return run_chain(cons, self.factors_, self.settings, seed, progress, judged_entries(self.columns_),
                         checkpoint)

    def set_chains(self, chains) -> "CopulaSynthesizer":
        """Keep the draws of every chain: a dict of arrays stacked over chains (C, T, ...)
        or a list of ``run_chain`` results in chain order. Sets ``draws_`` and
        ``convergence_`` (R-hat and ESS of C)."""
        if not isinstance(chains, dict):
            chains = {key: np.stack([c[key] for c in chains]) for key in chains[0]}
        self.draws_ = chains
        self.convergence_ = convergence(chains["Lambda"], chains["sigma2"], self.columns_)
        if "sweeps" in chains:
            self.convergence_["sweeps_per_chain"] = [int(x) for x in chains["sweeps"]]
        return self

    def fit_responses(self, frame: pd.DataFrame) -> "CopulaSynthesizer":
        """Last stage: BART for each response (none: nothing to do), in parallel processes
        when there are several and the table is large. Sets ``responses_``."""
        values = to_codes(frame, self.spec_)
        self.responses_ = self._fit_responses(self._copula_spec(self.spec_), values, response_order(self.spec_),
                                              np.random.SeedSequence([self.seed, 1]), self.workers)
        return self

    @staticmethod
    def _fit_responses(spec: TableSpec, values: dict, responses: tuple[str, ...],
                       seed: np.random.SeedSequence, workers: int | None = None
                       ) -> list[ResponseModel | CategoricalResponse]:
        """Rank-likelihood BART (probit BART for a binary, continuation-ratio probit BART
        for an unordered categorical) for each response given the
        copula columns and the responses before it. The fits are independent (each sees
        real values only), so they run in up to ``workers`` processes (None: one per core)
        once the rows times responses make that pay (PARALLEL_RESPONSE_ROWS)."""
        if not responses:
            return []
        settings = BartSettings.from_dict({k: v for k, v in spec.bart.items() if k != "order"})
        base = [c.name for c in spec.columns if c.name not in responses]
        unordered = {c.name: len(c.levels) for c in spec.columns if c.modelled_as == "categorical"}
        jobs = []
        for i, (name, s) in enumerate(zip(responses, seed.spawn(len(responses)))):
            design = Design.from_values(values, base + list(responses[:i]), unordered)
            col = spec.column(name)
            kind = "categorical" if col.modelled_as == "categorical" else col.kind
            jobs.append((name, values[name], Rows(design, {f: values[f] for f in design.features}),
                         design, settings, s, kind))
        n = len(values[responses[0]])
        workers = min(len(jobs), workers or os.cpu_count() or 1)
        if workers < 2 or n * len(jobs) < PARALLEL_RESPONSE_ROWS:
            return [fit_any(*job) for job in jobs]
        with process_pool(workers) as pool:
            return list(pool.map(fit_any, *zip(*jobs)))

    def response_summary(self) -> dict:
        """Which columns BART models and why, for reports and records (aggregates only):
        ``modelled`` in order, ``chosen_by`` ("screen" or "spec"), ``links`` (rank or
        probit per response) and the screen's scores (None when the spec named them)."""
        order = response_order(self.spec_)
        return {"modelled": list(order), "chosen_by": "spec" if self.screen_ is None else "screen",
                "derived": [d.describe() for d in self.derived_],
                "refined": [r.describe() for r in self.refined_],
                "links": {m.name: m.link for m in getattr(self, "responses_", [])},
                "summary": (self.screen_.summary() if self.screen_ is not None else
                            f"modelled by BART (declared in the spec): {', '.join(order) or 'none'}"),
                "screen": None if self.screen_ is None else self.screen_.to_dict()}

    def implications(self) -> list[str]:
        """The skip patterns coded as a level that the synthetic file keeps exactly
        (encode.implications), as ``"A=a -> Y=c"`` in the table's labels; aggregates only."""
        def label(column, code):
            levels = self.spec_.column(column).levels
            return levels[int(code)] if levels else f"{code:g}"
        rules = {}
        for c in self.columns_:
            for source, level, value in c.implied:
                rules[f"{source}={label(source, level)} -> {c.source}={label(c.source, value)}"] = None
        return list(rules)

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

    def sample(self, n_rows: int | None = None, seed: int = 0, draw: int | None = None,
               prior_strength: float = 0.0, min_cell_count: int = 1, proposals: int = 20,
               gibbs_steps: int = 200, response_draws: bool = False, rules=(), return_info: bool = False):
        """One synthetic table of ``n_rows`` rows (default: as many as the real table) from
        posterior draw ``draw`` (default: one picked by ``seed``).

        ``prior_strength`` and ``min_cell_count`` smooth the categorical joint (see
        CategoricalJoint.sample); ``proposals`` and ``gibbs_steps`` tune the draw of the
        factors given the categorical combination (see synthesis.latent_rows);
        ``response_draws`` draws BART responses from one stored forest per file instead of
        the posterior mean; ``rules`` are edit rules (mixsynth.rules): rows breaking one are
        replaced by further rows from the same draw. So are rows equal to a real row on every
        column, when they are at most MAX_COPY_SHARE of the file (``copies_replaced`` in the
        info); above that, most combinations are common in the real file, and the copies are
        kept and counted (``copies_kept``): removing them would distort it. With ``return_info``, also returns a
        dict with the draw used, the share of rows whose factors were drawn exactly
        (``exact_share``), the share of first-round rows replaced for breaking a rule
        (``rule_rejected_share``) and, for the RL baseline, the share of rows whose dummies
        named several levels of a categorical (``multiply_classified``) and the share with
        every dummy off (``unclassified``, decoded as the base level).
        """
        missing = [s for s in ("marginals", "copula", "responses") if s not in self.stages()]
        if missing:
            raise InputError(f"the model is not fitted yet (missing stage: {', '.join(missing)}); "
                             "finish the fit before sampling")
        n_rows = self.n_rows_ if n_rows is None else int(n_rows)
        if n_rows < 1:
            raise InputError("rows: the number of synthetic rows must be at least 1")
        pick_seed, row_seed, redraw_seed = np.random.SeedSequence(seed).spawn(3)
        if draw is None:
            draw = int(np.random.default_rng(pick_seed).integers(self.n_draws_))
        options = (prior_strength, min_cell_count, proposals, gibbs_steps, response_draws)
        frame, info = self._rows(n_rows, draw, row_seed, *options)
        copies = self._copies(frame)
        replace_copies = bool(copies.any()) and copies.mean() <= MAX_COPY_SHARE
        info["copies_replaced"] = int(copies.sum()) if replace_copies else 0
        if copies.any() and not replace_copies:
            info["copies_kept"] = int(copies.sum())   # most combinations are common: removing them would bias

        def keep(batch: pd.DataFrame, batch_copies: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """(rows meeting every rule, rows kept: meeting them and, if replaced, no copy)."""
            rules_ok = rules_hold(batch, rules) if rules else np.ones(len(batch), bool)
            return rules_ok, rules_ok & ~(batch_copies & replace_copies)

        if rules or replace_copies:
            rules_ok, ok = keep(frame, copies)
            if rules:
                info["rule_rejected_share"] = float(1.0 - rules_ok.mean())
            parts, have = [frame[ok]], int(ok.sum())
            for batch_seed in redraw_seed.spawn(MAX_REDRAWS):
                if have >= n_rows:
                    break
                accept = max(ok.mean(), 0.01)
                batch, _ = self._rows(max(int(1.5 * (n_rows - have) / accept), 200), draw, batch_seed, *options)
                _, ok = keep(batch, self._copies(batch))
                parts.append(batch[ok])
                have += int(ok.sum())
            if have < n_rows:
                raise InputError("synthesis rules: too few synthetic rows meet every rule; check that the "
                                 "rules describe the real file (a rule the model can rarely meet stalls here)")
            frame = pd.concat(parts, ignore_index=True).iloc[:n_rows]
        info.update(draw=draw)
        return (frame, info) if return_info else frame

    def _copies(self, frame: pd.DataFrame) -> np.ndarray:
        """(rows,) bool: the synthetic rows equal to a real row on every column (missing
        equals missing), by the real rows' hashes (a model saved before they were kept: none)."""
        if self.row_hashes_ is None:
            return np.zeros(len(frame), bool)
        return np.isin(row_hashes(frame, unique=False), self.row_hashes_)

    def _rows(self, n_rows: int, draw: int, seed: np.random.SeedSequence, prior_strength, min_cell_count,
              proposals, gibbs_steps, response_draws) -> tuple[pd.DataFrame, dict]:
        """``n_rows`` synthetic rows from posterior draw ``draw`` and their info (sample())."""
        cell_seed, latent_seed, response_seed, refine_seed = seed.spawn(4)
        sources = categorical_sources(self.columns_)
        cat_codes = self.joint_.sample(n_rows, np.random.default_rng(cell_seed), prior_strength, min_cell_count)
        Z, exact = latent_rows(self.draw(draw), self.columns_, cat_codes, sources, latent_seed,
                               proposals, gibbs_steps)
        values, info, response_blanks = self._decode(Z, cat_codes, sources)
        refine_rng = np.random.default_rng(refine_seed)
        for r in self.refined_:   # before the responses, which BART draws given these values
            values[r.name], redrawn = r.apply(values[r.name], values[r.by], refine_rng)
            info[f"redrawn_share/{r.name}"] = redrawn / n_rows   # rows drawn again within their level
        rng = np.random.default_rng(response_seed)
        for model in self.responses_:
            blank = np.broadcast_to(response_blanks.get(model.name, False), n_rows)
            y = model.draw_values(model.design.matrix(values), self.marginals_[model.name], rng,
                                  draw if response_draws else None, ~blank)
            values[model.name] = np.where(blank, np.nan, y)
        for d in self.derived_:
            values[d.name] = d.apply(values[d.source])
        info["exact_share"] = exact
        return from_codes(values, self.spec_), info

    def sample_files(self, m: int, n_rows: int | None = None, seed: int = 0, **kwargs) -> list[pd.DataFrame]:
        """The m files of a release: ``[sample(seed)]`` for one, ``sample_many`` for several."""
        return [self.sample(n_rows, seed=seed, **kwargs)] if m == 1 else self.sample_many(m, n_rows, seed, **kwargs)

    def sample_many(self, m: int, n_rows: int | None = None, seed: int = 0, **kwargs) -> list[pd.DataFrame]:
        """m synthetic tables from m different posterior draws (needs m <= n_draws_)."""
        if not 1 <= m <= self.n_draws_:
            raise InputError(f"m must be between 1 and the {self.n_draws_} stored posterior draws; "
                             "keep more draws (more sweeps or less thinning) for more files")
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        draws = rng.choice(self.n_draws_, size=m, replace=False)
        seeds = np.random.SeedSequence(seed).generate_state(m)
        return [self.sample(n_rows, int(s), int(d), **kwargs) for s, d in zip(seeds, draws)]

    def _decode(self, Z: np.ndarray, cat_codes: np.ndarray, sources: list[str]):
        """Latent rows (p, n) -> model values of the copula's columns (blanks applied), RL
        classification info, and the blanks of the responses (column -> (n,) bool)."""
        n = Z.shape[1]
        values = {s: np.where(cat_codes[r] < 0, np.nan, cat_codes[r]).astype(float)
                  for r, s in enumerate(sources)}
        info = {}
        dummies: dict[str, list[tuple[int, np.ndarray]]] = {}
        missing = {}
        for j, c in enumerate(self.columns_):
            if c.role == "level":
                continue
            y = self.marginals_[c.name].ppf(uniforms(Z[j]))
            for source, level, value in c.implied:
                y = np.where(cat_codes[sources.index(source)] == level, value, y)
            if c.role == "value":
                values[c.source] = y
                if c.blanks:   # a binary whose value spells a skip pattern
                    missing.update(dict.fromkeys(c.blanks, y == c.blank_when))
            elif c.role == "missing":
                missing.update(dict.fromkeys(c.blanks, y > 0.5))
            else:
                dummies.setdefault(c.source, []).append((c.level, y > 0.5))
        if dummies:
            multi = np.zeros(n, bool)
            none = np.zeros(n, bool)
            for src, parts in dummies.items():
                on = np.stack([hit for _, hit in parts])
                levels = np.array([lv for lv, _ in parts])
                count = on.sum(axis=0)
                multi |= count > 1
                none |= count == 0
                values[src] = np.where(count == 0, 0, levels[np.argmax(on, axis=0)]).astype(float)
            info["multiply_classified"] = float(multi.mean())
            info["unclassified"] = float(none.mean())
        responses = {m.name for m in self.responses_}
        for src, blank in missing.items():
            if src not in responses:
                values[src] = np.where(blank, np.nan, values[src])
        return values, info, {src: b for src, b in missing.items() if src in responses}

    def save(self, path) -> None:
        """Write the fitted model to one ``.npz`` file: arrays plus a JSON header, no pickle.
        A model part-way through the staged fit saves the stages it has (``stages()``)."""
        if "marginals" not in self.stages():
            raise InputError("nothing to save: fit the model (or at least fit_marginals) first")
        meta = {
            "format": FORMAT,
            "versions": {p: version(p) for p in ("mixsynth", "numpy", "numba")},
            "method": self.method, "seed": self.seed, "settings": self.settings.to_dict(),
            "spec": self.spec_.to_dict(), "columns": [c.__dict__ for c in self.columns_],
            "factors": self.factors_, "n_rows": self.n_rows_, "stages": self.stages(),
            "convergence": getattr(self, "convergence_", None), "marginals": {},
            "screen": self.screen_.to_dict() if getattr(self, "screen_", None) else None,
        }
        arrays = {f"draws/{k}": v for k, v in getattr(self, "draws_", {}).items()}
        arrays["joint/cells"], arrays["joint/counts"] = self.joint_.cells, self.joint_.counts
        arrays["rows/hashes"] = self.row_hashes_
        for r, m in enumerate(self.joint_.margins):
            arrays[f"joint/margin/{r}"] = m
        meta["derived"] = _put_states(self.derived_, "derived", arrays)
        meta["refined"] = _put_states(self.refined_, "refined", arrays)
        meta["responses"] = _put_states(getattr(self, "responses_", []), "response", arrays)
        for name, marginal in self.marginals_.items():
            m_meta, m_arrays = marginal.to_state()
            meta["marginals"][name] = {"meta": m_meta, "arrays": sorted(m_arrays)}
            for key, arr in m_arrays.items():
                arrays[f"marginal/{name}/{key}"] = arr
        with atomic_path(Path(path)) as tmp, open(tmp, "wb") as fh:
            np.savez_compressed(fh, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path) -> "CopulaSynthesizer":
        """Read a model written by ``save``."""
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            if meta.get("format") != FORMAT:
                raise InputError(f"'{Path(path).name}' is not a {FORMAT} file: write one with `mixsynth fit`")
            arrays = {k: f[k] for k in f.files if k != "meta"}
        self = cls(TableSpec.from_dict(meta["spec"]), SamplerSettings.from_dict(meta["settings"]),
                   meta["method"], meta["seed"])
        self.spec_ = self.spec
        self.columns_ = [LatentColumn(**{**c, "blanks": tuple(c["blanks"]), "pooled": tuple(c.get("pooled", ())),
                                          "fixed_where_seen": tuple(c.get("fixed_where_seen", ())),
                                          "implied": tuple(tuple(t) for t in c.get("implied", ()))})
                         for c in meta["columns"]]
        self.factors_, self.n_rows_ = meta["factors"], meta["n_rows"]
        self.screen_ = ResponseScreen.from_dict(meta["screen"]) if meta.get("screen") else None
        self.derived_ = [Derivation.from_state(d, _state_arrays(arrays, f"derived/{i}/"))
                         for i, d in enumerate(meta.get("derived", []))]
        self.refined_ = [Refinement.from_state(r, _state_arrays(arrays, f"refined/{i}/"))
                         for i, r in enumerate(meta.get("refined", []))]
        stages = meta.get("stages", ["marginals", "copula", "responses"])
        if "copula" in stages:
            self.convergence_ = meta["convergence"]
            self.draws_ = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("draws/")}
        self.row_hashes_ = arrays.get("rows/hashes")
        n_margins = sum(k.startswith("joint/margin/") for k in arrays)
        self.joint_ = CategoricalJoint(arrays["joint/cells"], arrays["joint/counts"],
                                       [arrays[f"joint/margin/{r}"] for r in range(n_margins)])
        if "responses" in stages:
            self.responses_ = [response_from_state(r, _state_arrays(arrays, f"response/{i}/"))
                               for i, r in enumerate(meta["responses"])]
        self.marginals_ = {
            name: marginal_from_state(m["meta"], {a: arrays[f"marginal/{name}/{a}"] for a in m["arrays"]})
            for name, m in meta["marginals"].items()}
        return self


def _put_states(items: list, prefix: str, arrays: dict) -> list[dict]:
    """The metadata of each item's ``to_state()``; its arrays go into ``arrays`` under
    ``prefix/i/key``."""
    metas = []
    for i, item in enumerate(items):
        meta, state = item.to_state()
        metas.append(meta)
        arrays.update({f"{prefix}/{i}/{key}": arr for key, arr in state.items()})
    return metas


def _state_arrays(arrays: dict, prefix: str) -> dict:
    """The arrays saved under ``prefix`` (``_put_states``), keyed by what follows it."""
    return {key[len(prefix):]: arr for key, arr in arrays.items() if key.startswith(prefix)}
