"""The code location: every configured survey's assets, job, schedule and sensor.

Surveys are the spec files with a ``survey:`` section in ``MIXSYNTH_SURVEYS`` (default:
``examples/``, where the demo survey ncbirths is configured). Each survey gets a job
``<survey>_wave`` that materializes every asset of one wave, tagged as a heavy run for the
run queue (``dagster.yaml``), and runs on the multiprocess executor, so the MCMC chains run
as parallel steps.
"""
from __future__ import annotations

import os

import dagster as dg

from assets import survey_assets, waves_partitions
from mixsynth import InputError
from mixsynth.survey import Survey, load_surveys
from resources import ConfidentialStore, LandingArea, ReleaseStore, project_folder

from .triggers import landing_sensor, latest_wave_schedule

HEAVY_TAG = {"mixsynth/heavy": "true"}
# Step processes fork from a server that has imported the code location once (dagster, the
# core, arviz: seconds a process otherwise); chains still run side by side.
EXECUTOR = dg.multiprocess_executor.configured(
    {"start_method": {"forkserver": {"preload_modules": ["pipeline.definitions"]}}})
# dagster-celery: each step (each chain) a celery task on whichever worker takes it. Late
# acknowledgement with the workers' prefetch of one: a busy worker holds no second task, so
# the chains go to two idle workers, and a task whose worker dies is handed out again.
# Workers start with the same settings: `dagster-celery worker start -A dagster_celery.app
# -y celery.yaml` (celery.yaml reads the same variables).
CELERY_CONFIG = {"broker": {"env": "MIXSYNTH_CELERY_BROKER"}, "backend": {"env": "MIXSYNTH_CELERY_BACKEND"},
                 "config_source": {"task_acks_late": True}}


def executor_from_env():
    """``MIXSYNTH_EXECUTOR``: ``multiprocess`` (default) or ``celery`` (dagster-celery, with
    ``MIXSYNTH_CELERY_BROKER`` and ``MIXSYNTH_CELERY_BACKEND``, e.g. ``redis://host:6379/0``)."""
    choice = os.environ.get("MIXSYNTH_EXECUTOR") or "multiprocess"
    if choice == "multiprocess":
        return EXECUTOR
    if choice != "celery":
        raise InputError(f"MIXSYNTH_EXECUTOR must be 'multiprocess' or 'celery', not {choice!r}")
    missing = [v for v in ("MIXSYNTH_CELERY_BROKER", "MIXSYNTH_CELERY_BACKEND") if not os.environ.get(v)]
    if missing:
        raise InputError(f"MIXSYNTH_EXECUTOR=celery needs {' and '.join(missing)} (e.g. redis://host:6379/0)")
    try:
        from dagster_celery import celery_executor
    except ImportError:
        raise InputError("MIXSYNTH_EXECUTOR=celery needs dagster-celery: pip install -e '.[celery]'") from None
    return celery_executor.configured(CELERY_CONFIG)


def surveys_folder():
    """``MIXSYNTH_SURVEYS``, else the project's ``examples/`` folder."""
    return os.environ.get("MIXSYNTH_SURVEYS") or project_folder() / "examples"


def job_name(survey: str) -> str:
    return f"{survey}_wave"


def survey_definitions(survey: Survey) -> dg.Definitions:
    """The assets, job, schedule and sensor of one survey."""
    partitions = waves_partitions(survey)
    job = dg.define_asset_job(job_name(survey.name), selection=dg.AssetSelection.groups(survey.name),
                              tags=HEAVY_TAG,
                              description=f"Every asset of one {survey.name} wave, from the raw table "
                                          "to the published release.")
    return dg.Definitions(assets=survey_assets(survey), jobs=[job],
                          schedules=[latest_wave_schedule(survey, job, partitions)],
                          sensors=[landing_sensor(survey, job, partitions)])


def build_definitions(folder=None) -> dg.Definitions:
    """Definitions for every survey in ``folder`` (default ``surveys_folder()``), with the
    stores and the executor from the environment (``executor_from_env``)."""
    surveys = load_surveys(folder or surveys_folder())
    resources = {"confidential": ConfidentialStore.from_env(), "release": ReleaseStore.from_env(),
                 "landing": LandingArea.from_env()}
    return dg.Definitions.merge(*(survey_definitions(s) for s in surveys),
                                dg.Definitions(resources=resources, executor=executor_from_env()))


defs = build_definitions()
