import json

import numpy as np
import pandas as pd
import pytest

from mixsynth.schema import TableSpec, from_codes, infer_spec, load_spec, to_codes
from mixsynth.tableio import InputError, read_table, write_table

N = 30


def make_frame(seed=0):
    """A 30-row mixed table whose cell values are distinctive strings/numbers for leak checks."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["Zanzibar", "Quixote", "Marrakesh"], N).astype(object)
    city[[3, 7]] = None
    weeks = rng.integers(20, 45, N).astype(float)
    weeks[5] = np.nan
    return pd.DataFrame({
        "ID": np.arange(N),
        "City": city,
        "Smoke": rng.choice(["yes", "no"], N),
        "Weeks": weeks,
        "Births": rng.integers(0, 30, N),
        "Weight": rng.normal(3300.5, 400.0, N),
        "Race": rng.integers(1, 5, N),
        "Educ": rng.choice(["none", "primary", "secondary", "tertiary"], N),
        "Flag": rng.choice([True, False], N),
    })


def write_spec(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return load_spec(path)


def assert_clean(exc_info, column, secrets):
    """The InputError message names `column` and quotes none of `secrets`."""
    msg = str(exc_info.value)
    assert "\n" not in msg
    if column:
        assert column in msg
    for value in secrets:
        assert str(value) not in msg


def test_inference_rule():
    # rare levels are merged by default (test_input_defects); here every level is kept
    spec = infer_spec(make_frame(), {"exclude": ["ID"], "infer": {"min_level_rows": 0}})
    kinds = {c.name: c.kind for c in spec.columns}
    assert kinds == {"City": "categorical", "Smoke": "binary", "Weeks": "count", "Births": "count",
                     "Weight": "continuous", "Race": "categorical", "Educ": "categorical",
                     "Flag": "binary"}
    assert spec.excluded == ("ID",) and spec.names[0] == "City" and "Zanzibar" not in repr(spec)
    city, race, weeks = spec.column("City"), spec.column("Race"), spec.column("Weeks")
    assert city.levels == ("Marrakesh", "Quixote", "Zanzibar") and city.modelled_as == "categorical"
    assert race.levels == (1, 2, 3, 4) and all(type(v) is int for v in race.levels)
    assert spec.column("Flag").levels == (False, True) and spec.column("Smoke").modelled_as == "rank"
    assert weeks.lower == 0.0 and weeks.upper is None and weeks.dtype == "float64"
    assert spec.column("Weight").dtype == "float64" and spec.column("Births").dtype == "int64"


def test_ordered_category_is_ordinal():
    frame = make_frame()
    frame["Educ"] = pd.Categorical(frame["Educ"], ["tertiary", "secondary", "primary", "none"], ordered=True)
    col = infer_spec(frame).column("Educ")
    assert col.kind == "ordinal" and col.levels == ("tertiary", "secondary", "primary", "none")


def test_yaml_overrides(tmp_path):
    raw = write_spec(tmp_path, """
exclude: [ID]
infer: {min_level_rows: 0}   # every Births value is rare: kept here, rare values are test_input_defects'
columns:
  Race: {kind: categorical, role: quasi_identifier}
  Births: {kind: categorical}
  Weeks: {kind: continuous, lower: 10, upper: 50}
  Educ: {kind: ordinal, levels: [none, primary, secondary, tertiary]}
  Smoke: {role: sensitive}
sampler: {iterations: 200}
report: {title: t}
""")
    spec = infer_spec(make_frame(), raw)
    assert spec.column("Race").kind == "categorical" and spec.by_role("quasi_identifier")[0].name == "Race"
    assert spec.column("Births").modelled_as == "categorical"
    assert (spec.column("Weeks").lower, spec.column("Weeks").upper) == (10.0, 50.0)
    educ = spec.column("Educ")
    assert educ.levels == ("none", "primary", "secondary", "tertiary") and educ.unordered
    assert [c.name for c in spec.by_role("sensitive")] == ["Smoke"]
    assert spec.extra == {"report": {"title": "t"}}   # the settings sections are config.RunConfig's

    raw["columns"]["Educ"]["unordered"] = False
    assert infer_spec(make_frame(), raw).column("Educ").modelled_as == "rank"
    raw["infer"] = {"ordinal_as_categorical_below": 3}
    del raw["columns"]["Educ"]["unordered"]
    assert not infer_spec(make_frame(), raw).column("Educ").unordered


def test_sixty_levels_work():
    frame = pd.DataFrame({"Area": [f"area{i % 60:02d}" for i in range(600)], "x": np.arange(600) * 0.5})
    spec = infer_spec(frame)
    assert spec.column("Area").kind == "categorical" and len(spec.column("Area").levels) == 60
    assert from_codes(to_codes(frame, spec), spec).equals(frame)


@pytest.mark.parametrize("raw, column, match", [
    ({"columns": {"Nope": {"kind": "count"}}}, "Nope", "fix the name in the spec"),
    ({"exclude": ["Ghost"]}, "Ghost", "not in the input"),
    ({"columns": {"Weeks": {"kind": "count", "colour": "red"}}}, "Weeks", "unknown key 'colour'"),
    ({"columns": {"Weeks": {"kind": "discrete"}}}, "Weeks", "unknown kind"),
    ({"columns": {"Weeks": {"role": "secret"}}}, "Weeks", "unknown role"),
    ({"columns": {"City": {"kind": "count"}}}, "City", "not numeric"),
    ({"columns": {"Weight": {"kind": "count"}}}, "Weight", "non-integer"),
    ({"columns": {"Educ": {"kind": "ordinal"}}}, "Educ", "levels"),
    ({"columns": {"Educ": {"levels": ["none", "primary"]}}}, "Educ", "2 observed value"),
    ({"columns": {"Weight": {"upper": 1000}}}, "Weight", "upper"),
    ({"columns": {"City": {"unordered": False}}}, "City", "ordinal"),
    ({"columns": {"Race": {"kind": "binary"}}}, "Race", "4 distinct"),
])
def test_bad_spec(raw, column, match):
    with pytest.raises(InputError, match=match) as exc_info:
        infer_spec(make_frame(), raw)
    assert_clean(exc_info, column, ["Zanzibar", "Quixote", "Marrakesh", "primary", "secondary"])


def test_bad_data():
    frame = make_frame()
    with pytest.raises(InputError, match="1 rows, fewer than the minimum of 20") as e:
        infer_spec(frame.head(1))
    assert_clean(e, None, ["Zanzibar", "Quixote", "Marrakesh"])
    for column, values, match in [
        ("Const", ["CONSTVAL"] * (N - 1) + [None], "single distinct value and 1 missing"),
        ("Empty", [None] * N, "entirely missing"),
        ("Inf", [np.inf] + list(range(N - 1)), "1 infinite"),
    ]:
        with pytest.raises(InputError, match=match) as e:
            infer_spec(frame.assign(**{column: values}))
        assert_clean(e, column, ["CONSTVAL", 77777])

    many = pd.DataFrame({"Code": [f"secret{i:04d}" for i in range(5000)], "x": np.arange(5000.0) / 3})
    with pytest.raises(InputError, match="5000 distinct values, more than the limit of 100") as e:
        infer_spec(many)
    assert_clean(e, "Code", ["secret"])
    ints = many.assign(Code=np.arange(5000) + 9100)
    with pytest.raises(InputError, match="kind: count") as e:
        infer_spec(ints, {"columns": {"Code": {"kind": "categorical"}}})
    assert_clean(e, "Code", [9100, 9101])


def test_constant_columns_pass_through_outside_the_model():
    frame = make_frame().assign(Const=["CONSTVAL"] * N, Year=[77777] * N)
    spec = infer_spec(frame)
    assert "Const" not in spec.names and "Year" not in spec.names
    assert spec.output_names == list(frame.columns)
    assert any("'Const' is constant" in n for n in spec.notes)
    assert not any("CONSTVAL" in n or "77777" in n for n in spec.notes)
    out = from_codes(to_codes(frame, spec), spec)
    assert list(out.columns) == list(frame.columns)
    assert (out["Const"] == "CONSTVAL").all() and (out["Year"] == 77777).all() and out["Year"].dtype == "int64"
    assert TableSpec.from_dict(spec.to_dict()) == spec


def test_bad_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b\n")
    for path in (empty, header_only, tmp_path / "missing.parquet", tmp_path / "table.xlsx"):
        with pytest.raises(InputError) as e:
            read_table(path)
        assert_clean(e, path.name, [])
    broken = tmp_path / "broken.parquet"
    broken.write_text("Zanzibar,1\n")
    with pytest.raises(InputError) as e:
        read_table(broken)
    assert_clean(e, "broken.parquet", ["Zanzibar"])
    (tmp_path / "bad.yaml").write_text("- a list\n")
    with pytest.raises(InputError, match="mapping"):
        load_spec(tmp_path / "bad.yaml")


def round_trip_frame():
    """Mixed dtypes with missing values: str, int, float, bool and category columns."""
    frame = make_frame().drop(columns="ID")
    frame.loc[[2, 9], "Weight"] = np.nan
    frame.loc[4, "Educ"] = None
    return frame


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".tsv", ".parquet"])
def test_round_trip_through_files(tmp_path, suffix):
    frame = round_trip_frame()
    if suffix == ".parquet":
        frame["Educ"] = pd.Categorical(frame["Educ"], ["none", "primary", "secondary", "tertiary"], ordered=True)
        frame["Births"] = frame["Births"].astype("Int64")
        frame.loc[1, "Births"] = pd.NA
        frame["Area"] = pd.Categorical(frame["City"], ["Zanzibar", "Quixote", "Marrakesh"])
    path = tmp_path / f"table{suffix}"
    write_table(frame, path)
    back = read_table(path)
    spec = infer_spec(back, {"infer": {"min_level_rows": 0}})   # 30 rows: keep every level's type
    codes = to_codes(back, spec)
    assert all(v.dtype == np.float64 and v.shape == (N,) for v in codes.values())
    assert np.isnan(codes["City"][[3, 7]]).all() and set(codes["City"][~np.isnan(codes["City"])]) == {0, 1, 2}
    restored = from_codes(codes, spec)
    pd.testing.assert_frame_equal(restored, back)
    if suffix == ".parquet":
        pd.testing.assert_frame_equal(restored, frame)
        assert spec.column("Educ").kind == "ordinal"


def test_from_codes_restores_nullable_ints():
    frame = pd.DataFrame({"n": np.arange(N) % 7 + 10, "b": [True, False] * (N // 2)})
    spec = infer_spec(frame)
    codes = to_codes(frame, spec)
    codes["n"][0] = codes["b"][0] = np.nan
    out = from_codes(codes, spec)
    assert str(out["n"].dtype) == "Int64" and out["n"].isna().sum() == 1
    assert str(out["b"].dtype) == "boolean" and out["b"].isna().sum() == 1


def test_spec_dict_round_trip(tmp_path):
    raw = write_spec(tmp_path, "exclude: [ID]\nsynthesis: {m: 5}\nrelease: {notes: x}\n"
                               "columns: {Weight: {lower: null, role: response}}\n")
    spec = infer_spec(round_trip_frame().assign(ID=1), raw)
    assert spec.column("Weight").lower is None
    d = json.loads(json.dumps(spec.to_dict()))
    assert TableSpec.from_dict(d) == spec


def test_atomic_write_keeps_previous_file(tmp_path, monkeypatch):
    frame = round_trip_frame()
    for name in ("out.parquet", "out.csv"):
        path = tmp_path / name
        write_table(frame, path)
        before = path.read_bytes()
        if name.endswith(".csv"):
            def failing_to_csv(self, target, **kwargs):
                with open(target, "w") as fh:
                    fh.write("partial")
                raise RuntimeError("disk full")
            monkeypatch.setattr(pd.DataFrame, "to_csv", failing_to_csv)
            bad = frame
        else:
            bad = frame.assign(Obj=[object()] * N)
        with pytest.raises(InputError) as e:
            write_table(bad, path)
        assert_clean(e, name, ["Zanzibar", "object at"])
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"out.parquet", name})
