"""The release side of a survey wave: the candidate synthetic files and their expectations,
the utility and disclosure reports, the release decision with its record, and the swap of a
passing candidate into the release store."""

import errno

import dagster as dg

from mixsynth import read_table
from mixsynth.landing import file_digest
from mixsynth.report.measures import RISK_MEASURES
from resources import ConfidentialStore, ReleaseStore

from .metadata import (expectations_table, measures_table, number, report_plots, rules_table,
                       withheld_details)
from .stages import CANDIDATE, SurveyStages


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
        confidential.discard(name, wave, *CANDIDATE)
        with withheld_details("synthesizing"):
            tables = model.sample_release(s.survey.seed)
            m = len(tables)
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
            syns = [confidential.read_table(name, wave, f"candidate/{f}") for f in files]
            model = confidential.load_model(name, wave, "model.npz")
            report = build_report(train, syns, model.spec_, holdout=holdout, seed=s.survey.seed,
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


def decision_asset(s: SurveyStages) -> dg.AssetsDefinition:
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
        candidate = confidential.folder(name, wave, "candidate")
        with withheld_details("deciding the release"):
            decision = decide(report, model.config.release)
            record = synthesis_record(
                survey=name, wave=wave, fingerprint=fingerprint, spec_raw=survey.spec, spec=model.spec_,
                method={"method": model.method, "sampler": model.settings.to_dict(),
                        "synthesis": model.config.synthesis.to_dict(), "bart": model.config.bart_given(),
                        "holdout_share": survey.holdout, "factors": model.factors_},
                thresholds=model.config.release,
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
