"""``python -m pipeline.run SURVEY WAVE``: materialize every asset of one wave and say where
the release is.

The wave's file must be in the survey's landing folder. The run goes to the Dagster instance
at ``DAGSTER_HOME`` (so it shows in the UI) on the multiprocess executor, each MCMC chain in
its own process. The terminal follows the run at the instance's log level (INFO in the shipped
``dagster.yaml``): each chain's sweeps every tenth of its run and what the steps report, then
the decision and the release's files. ``--from-failure RUN_ID`` re-executes a failed run of
the wave from its failed steps (what the UI's "Re-execute from failure" does). Exit status
0 when the wave was released, 1 otherwise.
"""
import argparse
import json
import sys

import dagster as dg

from resources import ConfidentialStore, ReleaseStore

from .definitions import defs, job_name


def survey_job(survey: str) -> dg.JobDefinition:
    """The wave job of ``survey`` (rebuilt in each step process from this module)."""
    return defs.resolve_job_def(job_name(survey))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.run", description=__doc__.splitlines()[0])
    p.add_argument("survey")
    p.add_argument("wave")
    p.add_argument("--from-failure", metavar="RUN_ID",
                   help="re-execute this failed run of the wave from its failed steps")
    args = p.parse_args(argv)
    survey_job(args.survey)  # an unknown survey fails here, before the instance is touched
    instance = dg.DagsterInstance.get()
    partitions = f"{args.survey}_waves"
    if not instance.has_dynamic_partition(partitions, args.wave):
        instance.add_dynamic_partitions(partitions, [args.wave])
    job = dg.build_reconstructable_job("pipeline.run", "survey_job", reconstructable_args=(args.survey,))
    print(f"{args.survey} wave {args.wave}: the MCMC chains (as many as the wave's config asks for) run "
          f"side by side; each logs its sweeps (\"chain N: done/total sweeps\") every tenth of its run",
          flush=True)
    options = {"tags": {"dagster/partition": args.wave}}   # re-execution does not carry it over
    if args.from_failure:
        parent = instance.get_run_by_id(args.from_failure)
        if parent is None or parent.tags.get("dagster/partition") != args.wave:
            print(f"run {args.from_failure} is not a run of {args.survey} wave {args.wave}", file=sys.stderr)
            return 2
        options["reexecution_options"] = dg.ReexecutionOptions.from_failure(args.from_failure, instance)
    with dg.execute_job(job, instance, **options) as result:
        run_id, success = result.run_id, result.success
    release = ReleaseStore.from_env().folder(args.survey, args.wave)
    if success:
        record = json.loads((release / "record.json").read_text(encoding="utf-8"))
        print(f"{args.survey} wave {args.wave}: {record['decision']} (run {run_id})")
        for label, name in (("synthetic file", next(iter(record["outputs"]))), ("report", "report/report.html"),
                            ("synthesis record", "record.html")):
            print(f"  {label + ':':18} {release / name}")
        return 0
    candidate = ConfidentialStore.from_env().folder(args.survey, args.wave, "candidate")
    decision = candidate / "report" / "decision.json"
    verdict = json.loads(decision.read_text(encoding="utf-8"))["decision"] if decision.exists() else None
    print(f"{args.survey} wave {args.wave}: not released (run {run_id} failed"
          f"{'; decision: ' + verdict if verdict else ''}); see the run in the UI. "
          f"Candidate files (confidential): {candidate}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
