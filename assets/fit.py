"""The fit of a survey wave around the copula's posterior (posterior.py): the raw table, the
marginals and the BART responses (everything they write is confidential)."""

import time

import dagster as dg
import numpy as np

from mixsynth import CopulaSynthesizer, InputError, infer_spec, read_table
from mixsynth.landing import file_digest, wave_file
from resources import ConfidentialStore, LandingArea

from .metadata import number, withheld_details
from .stages import AFTER_MARGINALS, AFTER_RAW, AFTER_RESPONSES, FINGERPRINT_TAG, SurveyStages, WaveConfig


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
            config = survey.config(spec.columns)   # the wave's settings, read once here
            config.check_responses(spec)
            held = np.random.default_rng(survey.seed).random(len(real)) < survey.holdout
            train, holdout = real[~held].reset_index(drop=True), real[held].reset_index(drop=True)
            s.spec_of(train)  # the training rows alone must still meet the spec (e.g. min_rows)
            for part, frame in (("raw.parquet", real), ("train.parquet", train), ("holdout.parquet", holdout)):
                confidential.write_table(frame, name, wave, part)
            WaveConfig.write(config, confidential, name, wave)
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
        config = WaveConfig.read(confidential, name, wave)
        confidential.discard(name, wave, *AFTER_MARGINALS)
        with withheld_details("estimating the marginals"):
            spec = s.spec_of(train)
            model = CopulaSynthesizer(spec, config, seed=s.survey.seed).fit_marginals(train)
            confidential.save_model(model, name, wave, "model-marginals.npz")
        return dg.MaterializeResult(metadata={
            "rows": model.n_rows_, "copula_rows": model.copula_rows_, "modelled_columns": len(spec.columns), "latent_columns": len(model.columns_),
            "factors": model.factors_, "method": config.method, "seed": s.survey.seed})
    return marginal_estimates


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
            "bart_settings": dg.MetadataValue.json(model.config.bart_given()),
            "seconds": number(time.monotonic() - started)})
    return response_posterior
