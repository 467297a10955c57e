"""What starts a survey's runs: a schedule for its latest wave, a sensor for new landing files."""

import json
import os

import dagster as dg

from mixsynth import InputError
from mixsynth.landing import run_key, scan
from mixsynth.survey import Survey
from assets.stages import FINGERPRINT_TAG
from resources import ConfidentialStore, LandingArea


def latest_wave_schedule(survey: Survey, job, partitions: dg.DynamicPartitionsDefinition):
    """Resynthesize the survey's latest wave (the last one added) at the spec's cron time (UTC)."""
    @dg.schedule(name=f"{survey.name}_latest_wave", cron_schedule=survey.schedule, job=job,
                 execution_timezone="UTC", default_status=dg.DefaultScheduleStatus.RUNNING,
                 description=f"Resynthesizes the latest wave of {survey.name} ({survey.schedule}, UTC).")
    def schedule(context: dg.ScheduleEvaluationContext):
        waves = context.instance.get_dynamic_partitions(partitions.name)
        if not waves:
            return dg.SkipReason(f"{survey.name} has no wave yet; land a file to start one")
        return dg.RunRequest(partition_key=waves[-1], tags={"mixsynth/trigger": "schedule"})
    return schedule


def sensor_seconds() -> int:
    """How often the landing sensors look (``MIXSYNTH_SENSOR_SECONDS``, default 30 s)."""
    value = os.environ.get("MIXSYNTH_SENSOR_SECONDS") or "30"
    if not value.isdigit() or int(value) < 1:
        raise InputError("MIXSYNTH_SENSOR_SECONDS must be a whole number of seconds, at least 1")
    return int(value)


def landing_sensor(survey: Survey, job, partitions: dg.DynamicPartitionsDefinition):
    """Watch the survey's landing folder: each new complete file (``mixsynth.landing`` rule)
    becomes a wave partition and one run, keyed by its content digest. The cursor maps file
    names to the digest last requested, so a file seen again starts nothing; nor does a file
    whose content is already the wave's raw table (a run started by hand, e.g. ``make demo``)."""
    @dg.sensor(name=f"{survey.name}_landing", job=job, minimum_interval_seconds=sensor_seconds(),
               default_status=dg.DefaultSensorStatus.RUNNING,
               description=f"Starts a run for each new complete file in the {survey.name} landing folder.")
    def sensor(context: dg.SensorEvaluationContext, landing: LandingArea, confidential: ConfidentialStore):
        seen = json.loads(context.cursor) if context.cursor else {}
        folder = survey.landing_folder(landing.path())
        try:
            ready, skipped = scan(folder, survey.files, survey.settle_seconds)
        except OSError as exc:
            return dg.SkipReason(f"cannot list '{folder}' ({exc.strerror or type(exc).__name__}); check it")
        for file_name, reason in skipped:
            context.log.info(f"{file_name}: {reason}")
        fresh = [f for f in ready if seen.get(f.path.name) != f.digest]
        new = [f for f in fresh if confidential.fingerprint(survey.name, f.wave) != f.digest]
        seen.update({f.path.name: f.digest for f in fresh})
        if not new:
            return dg.SensorResult(skip_reason=f"no new complete file in '{folder}'",
                                   cursor=json.dumps(seen, sort_keys=True))
        known = set(context.instance.get_dynamic_partitions(partitions.name))
        added = sorted({f.wave for f in new} - known)
        return dg.SensorResult(
            run_requests=[dg.RunRequest(run_key=run_key(survey.name, f.wave, f.digest), partition_key=f.wave,
                                        tags={FINGERPRINT_TAG: f.digest, "mixsynth/trigger": "landing"})
                          for f in new],
            dynamic_partitions_requests=[partitions.build_add_request(added)] if added else [],
            cursor=json.dumps(seen, sort_keys=True))
    return sensor
