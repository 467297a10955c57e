"""The assets of one survey, partitioned by wave, in this lineage::

    raw_table -> marginal_estimates -> copula_chain_0 .. copula_chain_{C-1} -> copula_posterior
      -> response_posterior -> synthetic_files -> utility_report, disclosure_report
      -> release_decision -> published_release

Keys are ``<survey>/<stage>``; the survey name is also the asset group. Every asset reads
its inputs from and writes its outputs to the confidential store (nothing passes through
Dagster's IO managers, so no table is pickled into Dagster's storage); only
``published_release`` writes to the release store. Each MCMC chain is its own asset, so an
executor runs chains as parallel steps. Two blocking checks gate the release: the Great
Expectations suite on ``synthetic_files`` and the release rules on ``release_decision``.
"""

import contextlib
import errno
import os
import time
from dataclasses import dataclass

import dagster as dg
import numpy as np

from mixsynth import CopulaSynthesizer, InputError, infer_spec, read_table
from mixsynth.checkpoint import CHECKPOINT_SECONDS, Checkpoint
from mixsynth.landing import file_digest, wave_file
from mixsynth.report.measures import RISK_MEASURES
from mixsynth.sampler import SamplerSettings
from mixsynth.settings import method_settings
from mixsynth.survey import Survey
from resources import ConfidentialStore, LandingArea, ReleaseStore

from .metadata import (expectations_table, measures_table, number, report_plots,
                       rules_table, withheld_details)

FINGERPRINT_TAG = "mixsynth/fingerprint"
# What each stage's output is the basis of in the confidential store: discarded when the stage
# starts, so a failed or killed step never leaves a file from the previous input behind it.
CANDIDATE = ("candidate",)
AFTER_RESPONSES = CANDIDATE
AFTER_POSTERIOR = ("model.npz", ".model.npz.*.tmp", *AFTER_RESPONSES)     # the file and its temporaries
AFTER_CHAINS = ("model-copula.npz", ".model-copula.npz.*.tmp", *AFTER_POSTERIOR)
CHECKPOINTS = "checkpoints"   # the chains' states (Z included), kept until the posterior is complete
AFTER_MARGINALS = ("chain-*.npz", ".chain-*.tmp", CHECKPOINTS, *AFTER_CHAINS)   # draws and their temporaries
AFTER_RAW = ("model-marginals.npz", ".model-marginals.npz.*.tmp", *AFTER_MARGINALS)


@contextlib.contextmanager
def chain_threads(chains: int):
    """Give a chain step its share of the machine's cores for the sampler's numba threads, as
    ``mixsynth.sampler.run_chains`` gives each chain process (``MIXSYNTH_CHAIN_THREADS``
    overrides it, e.g. on executors that run each step on its own machine); yields the
    count and restores the previous one."""
    import numba
    before = numba.get_num_threads()
    threads = int(os.environ.get("MIXSYNTH_CHAIN_THREADS") or max(1, (os.cpu_count() or 1) // chains))
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(before)


def waves_partitions(survey: Survey) -> dg.DynamicPartitionsDefinition:
    """The survey's waves: one dynamic partition per landed wave file."""
    return dg.DynamicPartitionsDefinition(name=f"{survey.name}_waves")


@dataclass(frozen=True)
class WaveSettings:
    """The spec's method settings as one wave runs with them: read from the spec once, by
    ``raw_table``, kept in the wave's confidential folder (``settings.json``) and read back by
    every later stage, so a spec edited while a wave runs cannot mix two settings in one wave."""

    sampler: SamplerSettings
    method: str
    synthesis: dict
    FILE = "settings.json"

    @classmethod
    def from_spec(cls, spec) -> "WaveSettings":
        sampler, method, synthesis = method_settings(spec)
        return cls(sampler, method, synthesis)

    def write(self, confidential: ConfidentialStore, survey: str, wave: str) -> None:
        confidential.write_json({"sampler": self.sampler.to_dict(), "method": self.method,
                                 "synthesis": self.synthesis}, survey, wave, self.FILE)

    @classmethod
    def read(cls, confidential: ConfidentialStore, survey: str, wave: str) -> "WaveSettings":
        data = confidential.read_json(survey, wave, cls.FILE)
        return cls(SamplerSettings.from_dict(data["sampler"]), data["method"], dict(data["synthesis"]))


@dataclass(frozen=True)
class SurveyStages:
    """What every stage factory of one survey shares: its name, wave partitions and chains."""

    survey: Survey
    partitions: dg.DynamicPartitionsDefinition
    chains: int

    @property
    def name(self) -> str:
        return self.survey.name

    def key(self, stage: str) -> dg.AssetKey:
        return dg.AssetKey([self.name, stage])

    @property
    def common(self) -> dict:
        return {"partitions_def": self.partitions, "group_name": self.name}

    def spec_of(self, train):
        return infer_spec(train, self.survey.spec)


class ChainProgress:
    """Log a chain's sweeps while it runs: at each tenth of the run and at least every
    ``every`` seconds, so a terminal following the run (``make demo``) never sits silent for
    long. Counts and rates only."""

    def __init__(self, log, chain: int, total: int, every: float = 20.0):
        self.log, self.chain, self.total, self.every = log, chain, total, every
        self.started = self.last = time.monotonic()
        self.step = max(1, total // 10)
        self.next = self.step

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if done < self.next and now - self.last < self.every and done < self.total:
            return
        while self.next <= done:
            self.next += self.step
        self.last = now
        rate = done / (now - self.started) if now > self.started else 0.0
        self.log.info(f"chain {self.chain}: {done:,}/{self.total:,} sweeps ({100 * done // self.total}%, "
                      f"{number(rate)} sweeps/s)")


def raw_table_asset(s: SurveyStages) -> dg.AssetsDefinition:
    survey, name = s.survey, s.name

    @dg.asset(key=s.key("raw_table"), kinds={"csv"}, **s.common,
              description="The wave's confidential table, checked against the spec and split into "
                          "the rows synthesized from and the holdout (confidential store).")
    def raw_table(context: dg.AssetExecutionContext, landing: LandingArea,
                  confidential: ConfidentialStore) -> dg.MaterializeResult:
        wave = context.partition_key
        with withheld_details("reading the landing file"):
            path = wave_file(survey.landing_folder(landing.path()), wave, survey.files)
            digest = file_digest(path)
            expected = context.run.tags.get(FINGERPRINT_TAG)
            if expected and expected != digest:
                raise InputError(f"landing file '{path.name}' changed after the sensor saw it; "
                                 "the run for its new content follows, this one stops")
            real = read_table(path)
            confidential.discard(name, wave, *AFTER_RAW)
            spec = infer_spec(real, survey.spec)
            settings = WaveSettings.from_spec(spec)   # the wave's method settings, read once here
            held = np.random.default_rng(survey.seed).random(len(real)) < survey.holdout
            train, holdout = real[~held].reset_index(drop=True), real[held].reset_index(drop=True)
            s.spec_of(train)  # the training rows alone must still meet the spec (e.g. min_rows)
            for part, frame in (("raw.parquet", real), ("train.parquet", train), ("holdout.parquet", holdout)):
                confidential.write_table(frame, name, wave, part)
            settings.write(confidential, name, wave)
            confidential.write_json({"fingerprint": digest, "file": path.name}, name, wave, "input.json")
        schema = dg.TableSchema(columns=[dg.TableColumn(c.name, c.kind, description=f"role: {c.role}")
                                         for c in spec.columns])
        return dg.MaterializeResult(metadata={
            "dagster/row_count": len(real), "columns": real.shape[1], "modelled_columns": len(spec.columns),
            "excluded_columns": ", ".join(spec.excluded) or "none",
            "rows_synthesized_from": len(train), "holdout_rows": len(holdout),
            "fingerprint": digest, "landing_file": path.name, "dagster/column_schema": schema})
    return raw_table


def marginals_asset(s: SurveyStages, upstream) -> dg.AssetsDefinition:
    name = s.name

    @dg.asset(key=s.key("marginal_estimates"), deps=[upstream], kinds={"numpy"}, **s.common,
              description="Marginal distributions, latent layout, number of factors and the "
                          "categorical joint of the training rows (confidential).")
    def marginal_estimates(context: dg.AssetExecutionContext,
                           confidential: ConfidentialStore) -> dg.MaterializeResult:
        wave = context.partition_key
        train = confidential.read_table(name, wave, "train.parquet")
        settings = WaveSettings.read(confidential, name, wave)
        confidential.discard(name, wave, *AFTER_MARGINALS)
        with withheld_details("estimating the marginals"):
            spec = s.spec_of(train)
            model = CopulaSynthesizer(spec, settings.sampler, method=settings.method,
                                      seed=s.survey.seed).fit_marginals(train)
            confidential.save_model(model, name, wave, "model-marginals.npz")
        return dg.MaterializeResult(metadata={
            "rows": model.n_rows_, "modelled_columns": len(spec.columns), "latent_columns": len(model.columns_),
            "factors": model.factors_, "method": settings.method, "seed": s.survey.seed})
    return marginal_estimates


def chain_asset(s: SurveyStages, chain: int, upstream) -> dg.AssetsDefinition:
    name = s.name

    @dg.asset(key=s.key(f"copula_chain_{chain}"), deps=[upstream], kinds={"numpy"}, **s.common,
              description=f"MCMC chain {chain} of the copula (its own step, so chains run in parallel); "
                          "kept draws of alpha, Lambda and sigma^2 (confidential).")
    def copula_chain(context: dg.AssetExecutionContext,
                     confidential: ConfidentialStore) -> dg.MaterializeResult:
        wave = context.partition_key
        train = confidential.read_table(name, wave, "train.parquet")
        model = confidential.load_model(name, wave, "model-marginals.npz")
        settings = model.settings
        confidential.discard(name, wave, f"chain-{chain}.npz", f".chain-{chain}.npz.*.tmp", *AFTER_CHAINS)
        started = time.monotonic()
        with withheld_details(f"running chain {chain}"), chain_threads(s.chains) as threads:
            lengths = settings.lengths
            plan = (f"{settings.sweeps:,} sweeps ({settings.burn_in:,} burn-in)" if len(lengths) == 1 else
                    f"until its draws have mixed, checked after {', '.join(f'{x:,}' for x in lengths)} sweeps "
                    "(the first half of a run is burn-in)")
            context.log.info(f"chain {chain}: {plan} on {threads} thread(s)")
            checkpoint = Checkpoint(confidential.target(name, wave, f"{CHECKPOINTS}/chain-{chain}.npz"),
                                    float(os.environ.get("MIXSYNTH_CHECKPOINT_SECONDS") or CHECKPOINT_SECONDS))
            draws = model.run_chain(train, chain, ChainProgress(context.log, chain, settings.sweeps), checkpoint)
            if checkpoint.resumed_at:
                context.log.info(f"chain {chain}: went on from its checkpoint at sweep {checkpoint.resumed_at:,}")
            confidential.save_arrays(draws, name, wave, f"chain-{chain}.npz")
        seconds = time.monotonic() - started
        swept = int(draws["sweeps"])
        return dg.MaterializeResult(metadata={
            "chain": chain, "sweeps": swept, "burn_in": swept // 2 if len(lengths) > 1 else settings.burn_in,
            "kept_draws": settings.kept, "threads": threads, "seconds": number(seconds),
            "resumed_from_sweep": checkpoint.resumed_at,
            "sweeps_per_second": number(swept / seconds) if seconds > 0 else None})
    return copula_chain


def posterior_asset(s: SurveyStages, chain_assets) -> dg.AssetsDefinition:
    name, chains = s.name, s.chains

    @dg.asset(key=s.key("copula_posterior"), deps=chain_assets, kinds={"numpy"}, **s.common,
              description="Posterior draws of the copula from every chain, with R-hat and bulk ESS "
                          "of its correlations (confidential).")
    def copula_posterior(context: dg.AssetExecutionContext,
                         confidential: ConfidentialStore) -> dg.MaterializeResult:
        wave = context.partition_key
        model = confidential.load_model(name, wave, "model-marginals.npz")
        if model.settings.chains != chains:
            raise InputError(f"the spec now asks for {model.settings.chains} chains, the code location "
                             f"was loaded with {chains}; reload the code location and rematerialize")
        confidential.discard(name, wave, *AFTER_POSTERIOR)
        with withheld_details("combining the chains"):
            model.set_chains([confidential.load_arrays(name, wave, f"chain-{c}.npz") for c in range(chains)])
            confidential.save_model(model, name, wave, "model-copula.npz")
            confidential.discard(name, wave, CHECKPOINTS)
        conv = model.convergence_
        return dg.MaterializeResult(metadata={
            "chains": conv["chains"], "draws_per_chain": conv["draws_per_chain"],
            "sweeps": max(conv.get("sweeps_per_chain", [model.settings.sweeps])),
            "sweeps_per_chain": ", ".join(map(str, conv.get("sweeps_per_chain", [model.settings.sweeps]))),
            "correlations_checked": conv["entries"],
            "rhat_max": number(conv["rhat_max"]), "rhat_median": number(conv["rhat_median"]),
            "share_rhat_below_1_01": number(conv["share_rhat_below_1_01"]),
            "ess_bulk_min": number(conv["ess_bulk_min"]), "ess_bulk_median": number(conv["ess_bulk_median"]),
            "ess_tail_min": number(conv["ess_tail_min"])})
    return copula_posterior


def responses_asset(s: SurveyStages, upstream) -> dg.AssetsDefinition:
    name = s.name

    @dg.asset(key=s.key("response_posterior"), deps=[upstream], kinds={"numpy"}, **s.common,
              description="BART posterior of each response given the copula columns (the spec's "
                          "responses, or by default those the screen finds the copula cannot follow "
                          "and the outcomes of the report's regressions); the whole model (confidential).")
    def response_posterior(context: dg.AssetExecutionContext,
                           confidential: ConfidentialStore) -> dg.MaterializeResult:
        wave = context.partition_key
        train = confidential.read_table(name, wave, "train.parquet")
        model = confidential.load_model(name, wave, "model-copula.npz")
        confidential.discard(name, wave, *AFTER_RESPONSES)
        started = time.monotonic()
        with withheld_details("fitting the responses"):
            summary = model.response_summary()
            context.log.info(summary["summary"])
            model.fit_responses(train)
            confidential.save_model(model, name, wave, "model.npz")
        return dg.MaterializeResult(metadata={
            "responses": ", ".join(summary["modelled"]) or "none",
            "why": summary["summary"],
            "chosen_by": summary["chosen_by"],
            "bart_settings": dg.MetadataValue.json(dict(model.spec_.bart)),
            "seconds": number(time.monotonic() - started)})
    return response_posterior


def synthetic_asset(s: SurveyStages, upstream) -> dg.AssetsDefinition:
    name, key = s.name, s.key("synthetic_files")

    @dg.asset(key=key, deps=[upstream], kinds={"csv"}, **s.common,
              check_specs=[dg.AssetCheckSpec("expectations", asset=key, blocking=True,
                                             description="Great Expectations suite from the spec and the "
                                                         "real file's domain")],
              description="The candidate synthetic file(s), m posterior draws (confidential until "
                          "released), checked by the Great Expectations suite.")
    def synthetic_files(context: dg.AssetExecutionContext, confidential: ConfidentialStore):
        from mixsynth.expectations import check_synthetic  # gx imports in seconds: only here
        wave = context.partition_key
        train = confidential.read_table(name, wave, "train.parquet")
        model = confidential.load_model(name, wave, "model.npz")
        opts = dict(WaveSettings.read(confidential, name, wave).synthesis)
        confidential.discard(name, wave, *CANDIDATE)
        with withheld_details("synthesizing"):
            rows, m = opts.pop("rows"), int(opts.pop("m"))
            tables = model.sample_files(m, rows, s.survey.seed, **opts)
            names = ["synthetic.csv"] if m == 1 else [f"synthetic_{i}.csv" for i in range(1, m + 1)]
            paths = [confidential.write_table(t, name, wave, f"candidate/{n}") for n, t in zip(names, tables)]
            outcome = check_synthetic([read_table(p) for p in paths], model.spec_, train)
        confidential.write_json({**outcome, "files": names}, name, wave, "candidate/expectations.json")
        yield dg.MaterializeResult(metadata={
            "files": ", ".join(names), "m": m, "dagster/row_count": len(tables[0]),
            "columns": tables[0].shape[1], "seed": s.survey.seed})
        yield dg.AssetCheckResult(check_name="expectations", passed=outcome["success"], metadata={
            "met": f"{outcome['successful']} of {outcome['evaluated']}",
            "expectations": expectations_table(outcome)})
    return synthetic_files


def reports_asset(s: SurveyStages, upstream) -> dg.AssetsDefinition:
    name = s.name
    specs = [
        dg.AssetSpec(s.key("utility_report"), deps=[upstream], kinds={"html"}, group_name=name,
                     description="Utility of the synthetic file(s) against the real training rows and "
                                 "the holdout: marginals, associations, declared analyses (aggregates)."),
        dg.AssetSpec(s.key("disclosure_report"), deps=[upstream], kinds={"html"}, group_name=name,
                     description="Disclosure risk: exact copies, distance to closest record, attribute "
                                 "inference, outliers (aggregates)."),
    ]

    @dg.multi_asset(specs=specs, partitions_def=s.partitions, name=f"{name}_reports")
    def reports(context: dg.AssetExecutionContext, confidential: ConfidentialStore):
        from mixsynth.report.build import build_report
        from mixsynth.report.outputs import write_report
        wave = context.partition_key
        train = confidential.read_table(name, wave, "train.parquet")
        holdout = confidential.read_table(name, wave, "holdout.parquet")
        files = confidential.read_json(name, wave, "candidate/expectations.json")["files"]
        with withheld_details("building the report"):
            spec = s.spec_of(train)
            syns = [confidential.read_table(name, wave, f"candidate/{f}") for f in files]
            model = confidential.load_model(name, wave, "model.npz")
            report = build_report(train, syns, spec, holdout=holdout, seed=s.survey.seed,
                                  convergence=model.convergence_, responses=model.response_summary())
            confidential.write_json(report, name, wave, "candidate/report.json")
            page = confidential.owner_only(
                write_report(confidential.folder(name, wave, "candidate", "report"), report, None))[-1]
        headline, meanings = report["headline"], report["headline_meaning"]
        utility = [m for m in headline if m not in RISK_MEASURES]
        risk = [m for m in headline if m in RISK_MEASURES]
        plots = {"plots": report_plots(page)}
        for spec_key, names, extra in ((s.key("utility_report"), utility, plots),
                                       (s.key("disclosure_report"), risk, {})):
            yield dg.MaterializeResult(asset_key=spec_key, metadata={
                "headline": measures_table(headline, meanings, names),
                **{m: number(headline[m]) for m in names}, **extra,
                "report_page": dg.MetadataValue.path(str(page)),
                "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in report["notes"]) or "none")})
    return reports


def decision_asset(s: SurveyStages, release_section: dict) -> dg.AssetsDefinition:
    survey, name, key = s.survey, s.name, s.key("release_decision")

    @dg.asset(key=key, deps=[s.key("utility_report"), s.key("disclosure_report")], kinds={"json"}, **s.common,
              check_specs=[dg.AssetCheckSpec("release_rules", asset=key, blocking=True,
                                             description="The spec's utility and risk thresholds on the "
                                                         "report's measures: no rule failed without a "
                                                         "limitation, and every expectation met")],
              description="The release decision, rule by rule with limitation texts, and the synthesis "
                          "record of the candidate (confidential until released).")
    def release_decision(context: dg.AssetExecutionContext, confidential: ConfidentialStore):
        from mixsynth.record import synthesis_record, write_record
        from mixsynth.report.outputs import summary_markdown, write_report
        from mixsynth.report.release import decide
        wave = context.partition_key
        report = confidential.read_json(name, wave, "candidate/report.json")
        expectations = confidential.read_json(name, wave, "candidate/expectations.json")
        model = confidential.load_model(name, wave, "model.npz")
        fingerprint = confidential.read_json(name, wave, "input.json")["fingerprint"]
        settings = WaveSettings.read(confidential, name, wave)
        candidate = confidential.folder(name, wave, "candidate")
        with withheld_details("deciding the release"):
            decision = decide(report, release_section)
            record = synthesis_record(
                survey=name, wave=wave, fingerprint=fingerprint, spec_raw=survey.spec, spec=model.spec_,
                method={"method": settings.method, "sampler": model.settings.to_dict(),
                        "synthesis": settings.synthesis, "bart": dict(model.spec_.bart),
                        "holdout_share": survey.holdout, "factors": model.factors_},
                seeds={"holdout_split": survey.seed, "mcmc": survey.seed, "synthesis": survey.seed,
                       "report": survey.seed},
                convergence=model.convergence_, report=report, expectations=expectations, decision=decision,
                outputs={f: file_digest(candidate / f) for f in expectations["files"]})
            confidential.owner_only(write_report(candidate / "report", report, decision)
                                    + write_record(candidate, record))
        passed = decision["decision"] != "reject" and expectations["success"]
        met = f"{expectations['successful']} of {expectations['evaluated']}"
        yield dg.MaterializeResult(metadata={
            "decision": decision["decision"],
            "rules_passed": sum(r["passed"] for r in decision["rules"]), "rules": rules_table(decision),
            "rules_checked": len(decision["rules"]),
            "limitations": dg.MetadataValue.md("\n".join(f"- {t}" for t in decision["limitations"]) or "none"),
            "expectations_met": met, "summary": dg.MetadataValue.md(summary_markdown(report, decision)),
            "record": dg.MetadataValue.path(str(candidate / "record.html"))})
        yield dg.AssetCheckResult(check_name="release_rules", passed=passed, metadata={
            "decision": decision["decision"], "rules": rules_table(decision), "expectations_met": met})
    return release_decision


def publish_asset(s: SurveyStages, upstream) -> dg.AssetsDefinition:
    name = s.name

    @dg.asset(key=s.key("published_release"), deps=[upstream], kinds={"folder"}, **s.common,
              description="The released files of the wave (synthetic file(s), report, synthesis record), "
                          "swapped into the release store only after a passing decision.")
    def published_release(context: dg.AssetExecutionContext, confidential: ConfidentialStore,
                          release: ReleaseStore) -> dg.MaterializeResult:
        wave = context.partition_key
        record = confidential.read_json(name, wave, "candidate/record.json")
        candidate = confidential.folder(name, wave, "candidate")
        if record["decision"] == "reject" or not record["expectations"]["success"]:
            raise dg.Failure(description=f"{name} wave {wave}: the decision is '{record['decision']}' "
                                         f"(expectations met: {record['expectations']['success']}); "
                                         "nothing published, the previous release stays")
        stale = [f for f, d in record["outputs"].items() if file_digest(candidate / f) != d]
        if stale:
            raise dg.Failure(description=f"{name} wave {wave}: candidate file(s) {', '.join(stale)} changed "
                                         "after the decision; rematerialize release_decision first")
        files = {f: candidate / f for f in record["outputs"]}
        files.update({f"report/{f}": candidate / "report" / f
                      for f in ("report.json", "decision.json", "summary.md", "report.html")})
        files.update({f: candidate / f for f in ("record.json", "record.html")})
        try:
            folder = release.publish(name, wave, files)
        except OSError as exc:
            cause = ("it is full (no space left on device)" if exc.errno == errno.ENOSPC
                     else f"{exc.strerror or type(exc).__name__}")
            raise dg.Failure(description=f"{name} wave {wave}: not published, the release store "
                                         f"'{release.folder(name, wave).parent.parent}' refused the files: "
                                         f"{cause}; the previous release stays as it was. Free the store, "
                                         "then re-execute published_release") from None
        return dg.MaterializeResult(metadata={
            "release_folder": dg.MetadataValue.path(str(folder)), "decision": record["decision"],
            "files": dg.MetadataValue.md("\n".join(f"- {f}" for f in files)),
            "synthetic_file": dg.MetadataValue.path(str(folder / next(iter(record["outputs"])))),
            "report": dg.MetadataValue.path(str(folder / "report" / "report.html")),
            "record": dg.MetadataValue.path(str(folder / "record.html"))})
    return published_release


def survey_assets(survey: Survey) -> list[dg.AssetsDefinition]:
    """Every asset (with its checks) of ``survey``, one small factory per stage."""
    release_section = survey.spec.get("release")
    if release_section is None:
        raise InputError(f"survey '{survey.name}' ({survey.spec_path.name}) has no `release:` section; "
                         "declare the release rules its files must meet")
    s = SurveyStages(survey, waves_partitions(survey), survey.sampler_settings().chains)
    raw = raw_table_asset(s)
    marginals = marginals_asset(s, raw)
    chains = [chain_asset(s, c, marginals) for c in range(s.chains)]
    posterior = posterior_asset(s, chains)
    responses = responses_asset(s, posterior)
    synthetic = synthetic_asset(s, responses)
    reports = reports_asset(s, synthetic)
    decision = decision_asset(s, release_section)
    return [raw, marginals, *chains, posterior, responses, synthetic, reports, decision,
            publish_asset(s, decision)]
