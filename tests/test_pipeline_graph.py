"""The Dagster pipeline end to end, in process: every asset of a wave, the gate and publishing."""
import json
import re
import stat

import dagster as dg

from pipeline_fixtures import land, small_table, survey_spec, write_survey

WAVE = "2026-q1"
CHAIN_STEP = "tiny__copula_posterior.tiny_run_chain"   # the chain steps: CHAIN_STEP[chain_0], ...


def run_wave(folder, instance, selection=None):
    from pipeline.definitions import build_definitions
    defs = build_definitions(folder)
    job = defs.resolve_job_def("tiny_wave")
    return job.execute_in_process(partition_key=WAVE, instance=instance, raise_on_error=False,
                                  asset_selection=selection)


def output_metadata(result) -> dict:
    """The metadata of each step output of a run (the chain steps'), by step key."""
    return {e.step_key: e.step_output_data.metadata for e in result.all_events if e.is_successful_output}


def metadata_text(result) -> str:
    """Every metadata value of every materialization, step output and check evaluation of a
    run, as text."""
    values = [v.value for e in result.get_asset_materialization_events()
              for v in e.materialization.metadata.values()]
    values += [v.value for meta in output_metadata(result).values() for v in meta.values()]
    values += [v.value for e in result.get_asset_check_evaluations() for v in e.metadata.values()]
    return "\n".join(json.dumps(v, default=str) if isinstance(v, (dict, list)) else str(v) for v in values)


def test_a_wave_materializes_to_a_published_release_and_a_failing_rule_keeps_it(stores, instance):
    """On both shipped instances: dagster.yaml (SQLite) and docker/dagster.yaml (Postgres)."""
    real = small_table()
    land(stores / "landing" / "tiny" / f"{WAVE}.csv", real)
    folder = write_survey(stores / "surveys", survey_spec())
    instance.add_dynamic_partitions("tiny_waves", [WAVE])

    result = run_wave(folder, instance)
    assert result.success
    # the run, its events and the wave partition are in the instance's storage
    stored = instance.get_run_by_id(result.run_id)
    assert stored.status == dg.DagsterRunStatus.SUCCESS and stored.tags["dagster/partition"] == WAVE
    assert instance.get_dynamic_partitions("tiny_waves") == [WAVE]
    latest = instance.get_latest_materialization_event(dg.AssetKey(["tiny", "published_release"]))
    assert latest.run_id == result.run_id and latest.dagster_event.partition == WAVE
    done = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert done == {f"tiny/{s}" for s in ("raw_table", "marginal_estimates", "copula_posterior",
                                          "response_posterior", "synthetic_files",
                                          "utility_report", "disclosure_report", "release_decision",
                                          "published_release")}
    meta = {e.asset_key.path[-1]: e.materialization.metadata for e in result.get_asset_materialization_events()}
    assert meta["copula_posterior"]["rhat_max"].value is not None and meta["raw_table"]["dagster/row_count"].value == 300
    assert meta["utility_report"]["plots"].value.startswith("![plot 1](data:image/png;base64,")
    assert "| mean_cio |" in meta["utility_report"]["headline"].value
    assert "| exact_copies |" in meta["disclosure_report"]["headline"].value
    assert meta["release_decision"]["decision"].value in ("release", "release with limitations")
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"expectations": True, "release_rules": True}

    release = stores / "release" / "tiny" / WAVE
    assert sorted(str(p.relative_to(release)) for p in release.rglob("*") if p.is_file()) == [
        "record.html", "record.json", "report/decision.json", "report/report.html", "report/report.json",
        "report/summary.md", "synthetic.csv"]
    record = json.loads((release / "record.json").read_text())
    assert record["decision"] in ("release", "release with limitations")
    assert [r["measure"] for r in record["rules"]] == ["mean_cio", "exact_copies"]
    assert record["input"]["fingerprint"].startswith("sha256:") and record["seeds"]["mcmc"] == 3
    assert record["convergence"]["chains"] == 2 and record["expectations"]["success"]
    assert set(record["versions"]) >= {"mixsynth", "numpy", "great_expectations", "dagster"}

    confidential = stores / "confidential" / "tiny"
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in [confidential, *confidential.rglob("*")] if p.is_dir())
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in confidential.rglob("*") if p.is_file())
    assert not any((release.parent).glob(".*")), "no staging folder left behind"

    # no real row, cell or number of the raw table appears in any metadata value
    text = metadata_text(result)
    assert "| mean_cio |" in text   # the text does hold the metadata
    for row in real.itertuples(index=False):
        assert str(tuple(row)) not in text and ",".join(map(str, row)) not in text
    # real numbers precise enough not to meet a metadata figure (four significant digits) by
    # chance must not appear as numbers in the text
    numbers = set(re.findall(r"-?\d+(?:\.\d+)?", text))
    for column in ("income", "score"):
        distinctive = {repr(float(x)) for x in real[column] if len(repr(float(x)).strip("-").replace(".", "").strip("0")) >= 5}
        assert distinctive and not numbers & distinctive, column

    # a stricter spec rejects the wave run with it (its rules are part of the wave's config,
    # read by raw_table): the decision is recorded, nothing is published
    before = {p: p.read_bytes() for p in release.rglob("*") if p.is_file()}
    strict = write_survey(stores / "strict", survey_spec(rules=[{"measure": "mean_cio", "min": 1.01}]))
    rejected = run_wave(strict, instance)
    assert not rejected.success
    decision = {e.asset_key.path[-1]: e for e in rejected.get_asset_materialization_events()}
    assert "release_decision" in decision and "published_release" not in decision
    assert decision["release_decision"].materialization.metadata["decision"].value == "reject"
    checks = {e.check_name: e.passed for e in rejected.get_asset_check_evaluations()}
    assert checks == {"expectations": True, "release_rules": False}
    assert {p: p.read_bytes() for p in release.rglob("*") if p.is_file()} == before

    # publishing alone (no check in the run) still refuses the rejected candidate
    alone = run_wave(strict, instance, [dg.AssetKey(["tiny", "published_release"])])
    assert not alone.success
    assert "the decision is 'reject'" in alone.get_step_failure_events()[0].step_failure_data.error.message
    assert {p: p.read_bytes() for p in release.rglob("*") if p.is_file()} == before


def metadata_floats(result) -> dict:
    """Every float metadata value of a run's materializations, step outputs and checks, by
    asset, step or check and name."""
    found = {}
    for e in result.get_asset_materialization_events():
        for k, v in e.materialization.metadata.items():
            if isinstance(v.value, float):
                found[f"{e.asset_key.path[-1]}/{k}"] = v.value
    for step, meta in output_metadata(result).items():
        found.update({f"{step}/{k}": v.value for k, v in meta.items() if isinstance(v.value, float)})
    for e in result.get_asset_check_evaluations():
        for k, v in e.metadata.items():
            if isinstance(v.value, float):
                found[f"{e.check_name}/{k}"] = v.value
    return found


def test_metadata_numbers_show_four_significant_digits_and_chains_log_their_sweeps(stores):
    land(stores / "landing" / "tiny" / f"{WAVE}.csv", small_table())
    folder = write_survey(stores / "surveys", survey_spec())
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("tiny_waves", [WAVE])
    result = run_wave(folder, instance)
    assert result.success
    floats = metadata_floats(result)
    assert {"copula_posterior/rhat_max", f"{CHAIN_STEP}[chain_0]/seconds", "utility_report/mean_cio"} \
        <= set(floats)
    for name, value in floats.items():
        assert value == float(f"{value:.4g}"), f"{name} = {value!r} has more than four significant digits"
    logs = [e.user_message for e in instance.all_logs(result.run_id) if e.dagster_event is None]
    for chain in (0, 1):
        lines = [m for m in logs if m.startswith(f"chain {chain}: ")]
        assert f"chain {chain}: 60 sweeps (20 burn-in) on" in lines[0]
        assert any(m.startswith(f"chain {chain}: 60/60 sweeps (100%, ") for m in lines), lines
        assert any(m.startswith(f"chain {chain}: 6/60 sweeps") or m.startswith(f"chain {chain}: 10/60 sweeps")
                   for m in lines), lines


def test_the_wave_keeps_the_method_settings_it_started_with(stores):
    """The spec's method settings are read once per wave (by raw_table): a spec edited while
    the wave runs changes nothing in that wave's later stages."""
    land(stores / "landing" / "tiny" / f"{WAVE}.csv", small_table())
    folder = write_survey(stores / "surveys", survey_spec())
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("tiny_waves", [WAVE])
    assert run_wave(folder, instance, [dg.AssetKey(["tiny", "raw_table"])]).success
    config = json.loads((stores / "confidential" / "tiny" / WAVE / "config.json").read_text())
    assert config["sampler"]["sweeps"] == 60 and config["method"] == "rpl" and config["synthesis"]["m"] == 1

    edited = survey_spec()
    edited["sampler"]["sweeps"] = 80
    edited["synthesis"]["m"] = 2
    later = run_wave(write_survey(stores / "edited", edited), instance,
                     [dg.AssetKey(["tiny", s]) for s in ("marginal_estimates", "copula_posterior",
                                                          "response_posterior", "synthetic_files")])
    assert later.success
    meta = {e.asset_key.path[-1]: e.materialization.metadata for e in later.get_asset_materialization_events()}
    assert output_metadata(later)[f"{CHAIN_STEP}[chain_0]"]["sweeps"].value == 60
    assert meta["copula_posterior"]["sweeps_per_chain"].value == "60, 60"
    assert meta["synthetic_files"]["m"].value == 1 and meta["synthetic_files"]["files"].value == "synthetic.csv"


def test_same_seed_gives_the_same_synthetic_file(stores):
    """Two materializations of one wave give byte-identical synthetic files."""
    land(stores / "landing" / "tiny" / f"{WAVE}.csv", small_table())
    folder = write_survey(stores / "surveys", survey_spec())
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("tiny_waves", [WAVE])
    selection = [dg.AssetKey(["tiny", s]) for s in ("raw_table", "marginal_estimates", "copula_posterior",
                                                    "response_posterior", "synthetic_files")]
    candidate = stores / "confidential" / "tiny" / WAVE / "candidate" / "synthetic.csv"
    files = []
    for _ in range(2):
        assert run_wave(folder, instance, selection).success
        files.append(candidate.read_bytes())
    assert files[0] == files[1]


def test_the_chain_steps_follow_the_wave_config_not_the_code_location(stores):
    """A wave whose stored config asks for 3 chains runs 3 chain steps in a code location
    loaded from a spec that asks for 2: no reload, no guard."""
    land(stores / "landing" / "tiny" / f"{WAVE}.csv", small_table())
    three = survey_spec()
    three["sampler"]["chains"] = 3
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("tiny_waves", [WAVE])
    assert run_wave(write_survey(stores / "three", three), instance,
                    [dg.AssetKey(["tiny", s]) for s in ("raw_table", "marginal_estimates")]).success
    config = json.loads((stores / "confidential" / "tiny" / WAVE / "config.json").read_text())
    assert config["sampler"]["chains"] == 3

    two = write_survey(stores / "two", survey_spec())   # the code location's spec: 2 chains
    result = run_wave(two, instance, [dg.AssetKey(["tiny", "copula_posterior"])])
    assert result.success
    started = {e.step_key for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_START}
    assert {k for k in started if k.startswith(CHAIN_STEP)} == {f"{CHAIN_STEP}[chain_{c}]" for c in range(3)}
    [posterior] = result.get_asset_materialization_events()
    assert posterior.asset_key == dg.AssetKey(["tiny", "copula_posterior"])
    meta = posterior.materialization.metadata
    assert meta["chains"].value == 3 and meta["sweeps_per_chain"].value == "60, 60, 60"
    assert not (stores / "confidential" / "tiny" / WAVE / "checkpoints").exists()
