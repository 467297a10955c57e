"""The assets of one survey, partitioned by wave, in this lineage::

    raw_table -> marginal_estimates -> copula_posterior -> response_posterior
      -> synthetic_files -> utility_report, disclosure_report -> release_decision
      -> published_release

Stages live in fit.py, posterior.py and release.py; what they share in stages.py. Keys are
``<survey>/<stage>``; the survey name is also the asset group. Every asset reads its inputs
from and writes its outputs to the confidential store (no table or model passes through
Dagster's IO managers, so none is pickled into Dagster's storage); only
``published_release`` writes to the release store. ``copula_posterior`` is a graph with one
step per MCMC chain, as many as the wave's stored config asks for, so an executor runs the
chains as parallel steps. Two blocking checks gate the release: the Great Expectations suite
on ``synthetic_files`` and the release rules on ``release_decision``.
"""

import dagster as dg

from mixsynth import InputError
from mixsynth.survey import Survey

from .fit import marginals_asset, raw_table_asset, responses_asset
from .posterior import posterior_asset
from .release import decision_asset, publish_asset, reports_asset, synthetic_asset
from .stages import SurveyStages, waves_partitions


def survey_assets(survey: Survey) -> list[dg.AssetsDefinition]:
    """Every asset (with its checks) of ``survey``, one small factory per stage."""
    config = survey.config()
    if config.release is None:
        raise InputError(f"survey '{survey.name}' ({survey.spec_path.name}) has no `release:` section; "
                         "declare the release rules its files must meet")
    s = SurveyStages(survey, waves_partitions(survey))
    raw = raw_table_asset(s)
    marginals = marginals_asset(s, raw)
    posterior = posterior_asset(s, marginals)
    responses = responses_asset(s, posterior)
    synthetic = synthetic_asset(s, responses)
    reports = reports_asset(s, synthetic)
    decision = decision_asset(s)
    return [raw, marginals, posterior, responses, synthetic, reports, decision,
            publish_asset(s, decision)]
