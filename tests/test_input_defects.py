"""Hostile and careless input (issue 15): one defect class per test, on a seeded 300-row
mixed table, through the command line in-process with a short chain. Each asserts the exit
status, the one-line message naming the column (or line) and the fix, that a planted secret
marker appears in no output, message or written file, and, for errors, that nothing was written."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mixsynth.cli import main
from mixsynth.record import synthesis_record
from mixsynth.report.build import build_report
from mixsynth.schema import infer_spec
from mixsynth.tableio import InputError

SECRET = "ZQXSECRET"
FAST = ["--sweeps", "60", "--chains", "1", "--thin", "2", "--no-progress", "--seed", "1"]


def mixed_table(n: int = 300, seed: int = 1) -> pd.DataFrame:
    """n rows: count, skewed income, binary, 4-level region, count, continuous with 10% missing."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 3))
    frame = pd.DataFrame({
        "age": (40 + 12 * z[:, 0]).round().clip(18, 90).astype(int),
        "income": np.round(np.exp(10 + 0.6 * z[:, 1] + 0.3 * z[:, 0]), 2),
        "sex": np.where(rng.random(n) < 0.5, "female", "male"),
        "region": rng.choice(["north", "east", "south", "west"], n),
        "visits": rng.poisson(2 + (z[:, 2] > 0), n),
        "score": np.round(50 + 10 * z[:, 2], 1),
    })
    frame.loc[rng.random(n) < 0.1, "score"] = np.nan
    return frame


def run(tmp_path, capsys, path, *extra, command="synthesize"):
    """(exit status, stdout, stderr) of `mixsynth synthesize path --out tmp/out/syn.csv`."""
    out = tmp_path / "out" / "syn.csv"
    args = [command, str(path), "--out", str(out), *FAST, *extra] if command == "synthesize" else \
        [command, str(path), *extra]
    status = main(args)
    printed = capsys.readouterr()
    return status, printed.out, printed.err


def assert_no_secret(tmp_path, *texts, inputs=()):
    """The marker is in none of the texts and in no file under tmp_path but the inputs."""
    for text in texts:
        assert SECRET not in text
    for path in Path(tmp_path).rglob("*"):
        if path.is_file() and path not in inputs:
            assert SECRET.encode() not in path.read_bytes(), path.name


def assert_refused(tmp_path, status, out, err, *needles):
    """Exit status 2, one line on stderr of at most 200 characters after the prefix, holding
    every needle and no folder of the run (files by base name), no output written."""
    assert status == 2
    line = err.strip()
    assert line.startswith("mixsynth: error:") and "\n" not in line and "Traceback" not in line
    assert len(line.removeprefix("mixsynth: error: ")) <= 200, line
    assert str(tmp_path) not in line
    for needle in needles:
        assert needle in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_files_are_read(tmp_path, capsys, sep):
    path = tmp_path / "real.csv"
    mixed_table().to_csv(path, index=False, sep=sep)
    status, out, err = run(tmp_path, capsys, path)
    assert status == 0, err
    syn = pd.read_csv(tmp_path / "out" / "syn.csv")
    assert list(syn.columns) == list(mixed_table().columns) and len(syn) == 300


def test_a_file_with_one_column_is_refused_in_one_short_line(tmp_path, capsys):
    path = tmp_path / "real.csv"
    path.write_text("age income sex\n" + "".join(f"{i} {i * 10} {SECRET}\n" for i in range(300)))
    status, out, err = run(tmp_path, capsys, path)
    assert_refused(tmp_path, status, out, err, "has one column", "comma, semicolon or tab")
    assert len(err.strip()) < 200
    assert_no_secret(tmp_path, out, err, inputs=(path,))


def test_repeated_column_names_are_refused_naming_the_column(tmp_path, capsys):
    path = tmp_path / "real.csv"
    frame = mixed_table()
    frame.columns = ["age", "income", "sex", "region", "age", "score"]
    frame.to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path)
    assert_refused(tmp_path, status, out, err, "column 'age' appears 2 times", "rename")


def test_a_malformed_row_is_named_by_its_line_never_its_values(tmp_path, capsys):
    path = tmp_path / "real.csv"
    mixed_table().to_csv(path, index=False)
    lines = path.read_text().splitlines()
    lines[57] += f",{SECRET}"                       # line 58 of the file: one field too many
    path.write_text("\n".join(lines) + "\n")
    status, out, err = run(tmp_path, capsys, path)
    assert_refused(tmp_path, status, out, err, "line 58 has 7 fields where the header has 6")
    assert_no_secret(tmp_path, out, err, inputs=(path,))


@pytest.mark.parametrize("sep, written, note", [
    (",", lambda v: f"{v:,.2f}", "thousands separators"),                  # 3,146.85
    (";", lambda v: f"{v:,.2f}".replace(",", " ").replace(".", ",").replace(" ", "."), "decimal commas"),
])
def test_numbers_with_separators_are_read_as_numbers_and_said_so(tmp_path, capsys, sep, written, note):
    path = tmp_path / "real.csv"
    real = mixed_table()
    real.assign(income=real["income"].map(written)).to_csv(path, index=False, sep=sep)
    status, out, err = run(tmp_path, capsys, path)
    assert status == 0, err
    assert f"input: column 'income': numbers written with {note}" in out
    syn = pd.read_csv(tmp_path / "out" / "syn.csv")
    assert pd.api.types.is_float_dtype(syn["income"])
    assert 0.5 < syn["income"].median() / real["income"].median() < 2.0   # read as the real magnitudes


def test_ambiguous_commas_are_refused_naming_the_column_and_the_fix(tmp_path, capsys):
    path = tmp_path / "real.csv"
    real = mixed_table()
    real.assign(income=(real["income"].round() + 1000).astype(int).map("{:,}".format)).to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path)
    assert_refused(tmp_path, status, out, err, "column 'income'", "`decimal:`")
    spec = tmp_path / "spec.yaml"
    spec.write_text('columns:\n  income: {decimal: "."}\n')
    status, out, err = run(tmp_path, capsys, path, "--spec", str(spec))
    assert status == 0 and pd.read_csv(tmp_path / "out" / "syn.csv")["income"].min() > 900


def test_words_in_a_number_column_become_missing_counted_never_quoted(tmp_path, capsys):
    path = tmp_path / "real.csv"
    real = mixed_table().astype({"age": object})
    real.loc[[4, 77, 150], "age"] = [SECRET, "refused", "don't know"]
    real.to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path)
    assert status == 0, err
    assert "input: column 'age': 3 cell(s) that are not numbers read as missing" in out
    syn = pd.read_csv(tmp_path / "out" / "syn.csv")
    assert pd.api.types.is_numeric_dtype(syn["age"])
    assert_no_secret(tmp_path, out, err, inputs=(path,))


@pytest.mark.parametrize("fmt, unit", [("%Y-%m-%d", "D"), ("%Y-%m-%d %H:%M:%S", "s")])
def test_iso_dates_are_modelled_as_numbers_and_written_in_their_format(tmp_path, capsys, fmt, unit):
    path = tmp_path / "real.csv"
    rng = np.random.default_rng(2)
    when = pd.Timestamp("1950-01-01") + pd.to_timedelta(rng.integers(0, 20000 * (86400 if unit == "s" else 1), 300),
                                                        unit=unit)
    mixed_table().assign(born=when.strftime(fmt)).to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path, "--model", str(tmp_path / "out" / "m.npz"))
    assert status == 0, err
    syn = pd.read_csv(tmp_path / "out" / "syn.csv", dtype={"born": str})
    back = pd.to_datetime(syn["born"], format=fmt)         # raises unless every cell is in the format
    assert back.min() >= pd.Timestamp("1940-01-01") and back.max() <= pd.Timestamp("2015-01-01")
    assert back.nunique() > 100                           # smoothed, not a handful of copied dates
    from mixsynth.model import CopulaSynthesizer
    assert CopulaSynthesizer.load(tmp_path / "out" / "m.npz").spec_.column("born").kind == "date"


def test_kind_date_can_be_declared_with_a_format(tmp_path, capsys):
    path = tmp_path / "real.csv"
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(300) * 3, unit="D")
    mixed_table().assign(visit=days.strftime("%d/%m/%Y")).to_csv(path, index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text('columns:\n  visit: {kind: date, format: "%d/%m/%Y"}\n')
    status, out, err = run(tmp_path, capsys, path, "--spec", str(spec))
    assert status == 0, err
    syn = pd.read_csv(tmp_path / "out" / "syn.csv", dtype={"visit": str})
    assert pd.to_datetime(syn["visit"], format="%d/%m/%Y").between("2019-06-01", "2023-01-01").all()


def test_a_near_unique_categorical_is_refused_with_the_fix(tmp_path, capsys):
    path = tmp_path / "real.csv"
    real = mixed_table()
    real["note"] = pd.Series([f"{SECRET} note {i % 50}" if i < 60 else None for i in range(300)], dtype=object)
    real.to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path)
    assert_refused(tmp_path, status, out, err, "column 'note' has 50 distinct values among 60 rows", "exclude")
    assert_no_secret(tmp_path, out, err, inputs=(path,))


def test_more_latent_columns_than_rows_is_refused_before_sampling(tmp_path, capsys):
    path = tmp_path / "real.csv"
    rng = np.random.default_rng(5)
    wide = pd.DataFrame({f"q{j}": rng.choice([f"a{k}" for k in range(6)], 50) for j in range(200)})
    wide.iloc[3, 7] = SECRET
    wide.to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path)
    assert_refused(tmp_path, status, out, err, "latent columns for 50 rows", "exclude")
    assert "sampling" not in out + err
    assert "more column notes" in out                     # the notes are capped, not one per column
    assert_no_secret(tmp_path, out, err, inputs=(path,))


def test_the_cost_estimate_is_printed_before_sampling(tmp_path, capsys):
    path = tmp_path / "real.csv"
    mixed_table().to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path)
    assert status == 0, err
    estimate = next(line for line in out.splitlines() if line.startswith("sampling 300 rows x"))
    assert "60 sweeps x 1 chain(s): expected about" in estimate
    assert out.index(estimate) < out.index("fitted 300 rows")


def test_the_bart_estimate_spreads_responses_over_processes_longest_first(monkeypatch):
    from mixsynth import guards
    monkeypatch.setattr(guards, "BART_PROBIT", (1.0, 0.0, 0.0, 0.0))     # 1 s a fit
    monkeypatch.setattr(guards, "BART_RANK", (0.0, 1e-3, 0.0, 0.0))      # 1 ms a row
    fits = [[(False, 10_000, 5, 0)], [(True, 100, 5, 0)] * 6, [(False, 5_000, 5, 0)]]   # 10 s, 6 s, 5 s
    assert guards.bart_seconds(fits, 1, True) == pytest.approx(21.0)
    assert guards.bart_seconds(fits, 2, False) == pytest.approx(21.0)
    assert guards.bart_seconds(fits, 2, True) == pytest.approx(guards.BART_PROCESS_SECONDS + 11.0)   # 10 | 6 + 5


def test_a_level_held_by_one_row_never_reaches_the_output(tmp_path, capsys):
    path = tmp_path / "real.csv"
    real = mixed_table()
    real["comment"] = "none"
    real.loc[11, "comment"] = SECRET + "x" * 1_000_000     # a 1 MB free-text cell
    real.loc[20, "region"] = SECRET
    real.to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path, "--model", str(tmp_path / "out" / "m.npz"), "--rows", "3000")
    assert status == 0, err
    assert "input: column 'comment': 1 level(s) held by fewer than 5 rows merged into 'other'" in out
    assert "input: column 'region': 1 level(s) held by fewer than 5 rows merged into 'other'" in out
    syn = pd.read_csv(tmp_path / "out" / "syn.csv")
    assert set(syn["comment"]) <= {"none", "other"} and set(syn["region"]) <= {"north", "east", "south", "west", "other"}
    (tmp_path / "out" / "m.npz").unlink()                 # the model is confidential: it may hold levels
    assert_no_secret(tmp_path, out, err, inputs=(path,))


def test_a_numeric_code_held_by_one_row_never_reaches_the_output(tmp_path, capsys):
    """A categorical of integer codes (a race code 7 held by one respondent): the code is
    suppressed (read as blank), so it is never written and the column stays a number
    column (issue 36)."""
    path = tmp_path / "real.csv"
    real = mixed_table()
    real["race"] = np.random.default_rng(3).choice([1, 2, 5], len(real), p=[0.6, 0.3, 0.1])
    real.loc[7, "race"] = 7
    real.to_csv(path, index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("columns:\n  race: {kind: categorical}\n")
    status, out, err = run(tmp_path, capsys, path, "--spec", str(spec), "--rows", "3000")
    assert status == 0, err
    assert "input: column 'race': 1 value(s) held by fewer than 5 rows suppressed (1 cell(s) read as blank)" in out
    syn = pd.read_csv(tmp_path / "out" / "syn.csv")
    assert pd.api.types.is_numeric_dtype(syn["race"])
    assert set(syn["race"].dropna()) <= {1, 2, 5} and (syn["race"] == 5).mean() > 0.05
    assert syn["race"].isna().mean() < 0.02            # one blank cell in 300 real rows


def test_a_sparse_number_column_stays_numbers_or_blank(tmp_path, capsys):
    """Issue 36: weight gain observed in 3 rows of 300 (each value held by one row) is
    released blank, never as the text 'other'; a 0/1 flag whose 1 is held by 2 rows
    comes back as its one releasable value; the record and the report name both."""
    path = tmp_path / "real.csv"
    real = mixed_table()
    real["gained"] = np.nan
    real.loc[[4, 50, 90], "gained"] = [31.0, 18.0, 44.0]
    real["twin"] = 0
    real.loc[[8, 9], "twin"] = 1
    real.to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path, "--rows", "1000")
    assert status == 0, err
    assert "input: column 'gained': too few of its 3 values are held by 5 or more rows to release any; " \
           "released blank" in out
    assert "input: column 'twin': only one value is held by 5 or more rows; written back as that constant" in out
    syn = pd.read_csv(tmp_path / "out" / "syn.csv")
    assert list(syn.columns) == list(real.columns)
    assert syn["gained"].dtype == np.float64 and syn["gained"].isna().all()
    assert syn["twin"].dtype == np.int64 and (syn["twin"] == 0).all()
    assert "x 10 latent columns" in out                   # both left out of the model
    spec = infer_spec(real)
    assert spec.blanked == ["gained"] and [c["name"] for c in spec.constants] == ["gained", "twin"]
    record = synthesis_record(survey="s", wave="w", fingerprint="f", spec_raw={}, spec=spec, method={}, thresholds=None, seeds={},
                              convergence=None, report=build_report(real, [syn], spec), expectations={},
                              decision={"decision": "release", "rules": [], "limitations": []}, outputs={})
    assert record["blank_columns"] == ["gained"] and record["constant_columns"] == ["twin"]
    assert any("'gained'" in n and "released blank" in n for n in record["report"]["notes"])
    from mixsynth.report.build import report_section
    asked = infer_spec(real, {"report": {"regressions": [{"formula": "score ~ gained + age"}]}})
    with pytest.raises(InputError, match="regressions.0.: column 'gained' is released blank"):
        report_section(asked)                          # one line naming the column, not a ValueError


def test_min_level_rows_is_a_spec_setting():
    real = mixed_table()
    real.loc[:2, "region"] = "rare"
    assert infer_spec(real).column("region").merged == 1
    kept = infer_spec(real, {"infer": {"min_level_rows": 3}}).column("region")
    assert kept.merged == 0 and "rare" in kept.levels


def test_report_and_record_name_the_touched_columns_never_values(tmp_path):
    real = mixed_table()
    real.loc[20, "region"] = SECRET
    real["filter"] = "wave2"
    spec = infer_spec(real)
    syn = real.drop(index=20).reset_index(drop=True).assign(region="north")
    report = build_report(real, [syn], spec)
    record = synthesis_record(survey="s", wave="w", fingerprint="f", spec_raw={}, spec=spec, method={}, thresholds=None, seeds={},
                              convergence=None, report=report, expectations={}, decision={
                                  "decision": "release", "rules": [], "limitations": []}, outputs={})
    assert record["recoded_columns"] == ["region"] and record["constant_columns"] == ["filter"]
    assert any("'region'" in n and "merged" in n for n in record["input_notes"])
    assert any("'region'" in n and "merged" in n for n in report["notes"])
    assert SECRET not in str(record) and SECRET not in str(report)


def test_a_constant_column_comes_back_constant(tmp_path, capsys):
    path = tmp_path / "real.csv"
    mixed_table().assign(filter="wave2").to_csv(path, index=False)
    status, out, err = run(tmp_path, capsys, path)
    assert status == 0, err
    assert "input: column 'filter' is constant: left out of the model and written back as it is" in out
    syn = pd.read_csv(tmp_path / "out" / "syn.csv")
    assert list(syn.columns)[-1] == "filter" and (syn["filter"] == "wave2").all()
    assert "x 10 latent columns" in out                   # the same layout as without it


def test_report_runs_without_a_spec_and_says_what_a_spec_adds(tmp_path, capsys):
    real_path, syn_path = tmp_path / "real.csv", tmp_path / "syn.csv"
    real = mixed_table()
    real.loc[20, "region"] = SECRET
    real.to_csv(real_path, index=False)
    mixed_table(seed=2).to_csv(syn_path, index=False)
    status = main(["report", str(real_path), str(syn_path), "--out", str(tmp_path / "rep")])
    printed = capsys.readouterr()
    assert status == 0, printed.err
    assert "no --spec: kinds inferred" in printed.out
    assert "would add: cross-tabulations, group statistics, regressions" in printed.out
    assert (tmp_path / "rep" / "report.json").exists() and not (tmp_path / "rep" / "decision.json").exists()
    assert_no_secret(tmp_path, printed.out, printed.err, inputs=(real_path,))


def test_report_sees_rare_numeric_codes_suppressed():
    """A numeric coded categorical with a rare code: the model and the report's view of the
    real file both read it as blank, so real and synthetic files meet level for level."""
    from mixsynth.schema import model_view, to_codes

    real = pd.DataFrame({"status": [2.0] * 40 + [3.0] * 30 + [8.0], "x": np.arange(71.0)})
    spec = infer_spec(real, {"columns": {"status": {"kind": "categorical"}}})
    assert spec.column("status").levels == (2.0, 3.0) and spec.recoded == ["status"]
    assert np.array_equal(to_codes(real, spec)["status"], [0.0] * 40 + [1.0] * 30 + [np.nan], equal_nan=True)
    seen = model_view(real, spec)["status"]
    assert seen.iloc[:70].tolist() == [2.0] * 40 + [3.0] * 30 and pd.isna(seen.iloc[70])
    synthetic = pd.DataFrame({"status": [2.0] * 30 + [3.0] * 41, "x": np.arange(71.0)})
    assert model_view(synthetic, spec)["status"].tolist() == [2.0] * 30 + [3.0] * 41
