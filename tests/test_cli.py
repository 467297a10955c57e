"""The command line: fit + synthesize, the two halves, bundled data, one-line errors."""
import json

import numpy as np
import pandas as pd
import pytest

from mixsynth.cli import main
from mixsynth.progress import SweepProgress
from tables import gaussian_copula_table

FAST = ["--sweeps", "200", "--chains", "1", "--thin", "2", "--no-progress"]


@pytest.fixture
def real_csv(tmp_path):
    path = tmp_path / "real.csv"
    gaussian_copula_table(400, seed=1).to_csv(path, index=False)
    return path


def test_synthesize_writes_m_files_with_the_real_schema(real_csv, tmp_path, capsys):
    out = tmp_path / "syn.csv"
    assert main(["synthesize", str(real_csv), "--out", str(out), "--m", "2", "--rows", "300", *FAST]) == 0
    printed = capsys.readouterr().out
    real = pd.read_csv(real_csv)
    for i in (1, 2):
        syn = pd.read_csv(tmp_path / f"syn_{i}.csv")
        assert list(syn.columns) == list(real.columns) and len(syn) == 300
        assert set(syn["region"]) <= set(real["region"])
        assert str(tmp_path / f"syn_{i}.csv") in printed
    assert "R-hat" in printed


def test_fit_then_sample_equals_synthesize(real_csv, tmp_path):
    model = tmp_path / "model.npz"
    assert main(["fit", str(real_csv), "--model", str(model), "--seed", "4", *FAST]) == 0
    assert main(["sample", str(model), "--out", str(tmp_path / "a.parquet"), "--seed", "4"]) == 0
    assert main(["synthesize", str(real_csv), "--out", str(tmp_path / "b.parquet"), "--seed", "4", *FAST]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "a.parquet"), pd.read_parquet(tmp_path / "b.parquet"))


def test_spec_sections_set_kinds_settings_and_synthesis(real_csv, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("columns:\n  visits: {kind: categorical}\n"
                    "sampler: {sweeps: 100, burn_in: 50, chains: 1, method: rl}\n"
                    "synthesis: {rows: 123}\n")
    model = tmp_path / "m.npz"
    assert main(["fit", str(real_csv), "--spec", str(spec), "--model", str(model), "--no-progress"]) == 0
    with np.load(model, allow_pickle=False) as f:
        meta = json.loads(str(f["meta"]))
    assert meta["config"]["method"] == "rl" and meta["config"]["sampler"]["sweeps"] == 100
    assert any(c["name"].startswith("visits=") for c in meta["columns"])
    assert main(["sample", str(model), "--out", str(tmp_path / "s.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "s.csv")) == 123


@pytest.mark.parametrize("content, column", [
    ("a,b\n", None),                                                   # empty file
    ("a,b\n1,2\n", None),                                              # one row
    ("const,x\n" + "".join(f"7,{i}\n" for i in range(50)), "const"),   # constant column
    ("gone,x\n" + "".join(f",{i}\n" for i in range(50)), "gone"),      # all missing
    ("id,x\n" + "".join(f"k{i},{i % 3}\n" for i in range(5000)), "id"),  # 5,000 levels
])
def test_bad_input_gives_one_line_naming_the_column(tmp_path, capsys, content, column):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert main(["synthesize", str(path), "--out", str(tmp_path / "s.csv"), *FAST]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mixsynth: error:") and "\n" not in err
    if column:
        assert f"'{column}'" in err or column in err
    assert "Traceback" not in err
    assert not (tmp_path / "s.csv").exists()


def test_unknown_spec_column_and_unreadable_model(real_csv, tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text("columns:\n  income_typo: {kind: continuous}\n")
    assert main(["fit", str(real_csv), "--spec", str(spec), "--model", str(tmp_path / "m.npz"), *FAST]) == 2
    assert "income_typo" in capsys.readouterr().err
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a model")
    assert main(["sample", str(junk), "--out", str(tmp_path / "s.csv")]) == 2
    assert "mixsynth fit" in capsys.readouterr().err


def test_errors_never_quote_cell_values(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    rows = "".join(f"SECRET{i},{i}\n" for i in range(3000))
    path.write_text("name,x\n" + rows)
    assert main(["fit", str(path), "--model", str(tmp_path / "m.npz"), *FAST]) == 2
    assert "SECRET" not in capsys.readouterr().err


def test_progress_line_reports_rate_and_is_plain_off_a_terminal(capsys):
    bar = SweepProgress(total=1000, chains=2, enabled=True)
    assert "500/2,000 sweeps" in bar.line(500, 10.0) and "50.0 sweeps/s" in bar.line(500, 10.0)
    quiet = SweepProgress(total=10, chains=1, enabled=False)
    quiet([10])
    assert capsys.readouterr().err == ""
    plain = SweepProgress(total=10, chains=1, plain_every=3600)   # stderr is captured, so not a terminal
    plain([5])                       # within plain_every of the start: nothing yet
    assert capsys.readouterr().err == ""
    plain([10])                      # the end is always written, as a plain line
    err = capsys.readouterr().err
    assert err.startswith("sampling: 10/10 sweeps (100%)") and err.endswith("\n") and "\r" not in err


def test_dataset_writes_the_bundled_tables(tmp_path):
    assert main(["dataset", "paper-simulation", str(tmp_path / "sim.csv"), "--rows", "100"]) == 0
    assert pd.read_csv(tmp_path / "sim.csv").shape == (100, 2)


def test_split_keeps_every_row_once_and_is_seeded(real_csv, tmp_path):
    a, b = tmp_path / "train.csv", tmp_path / "hold.csv"
    assert main(["split", str(real_csv), "--train", str(a), "--holdout", str(b), "--seed", "3"]) == 0
    real, train, hold = pd.read_csv(real_csv), pd.read_csv(a), pd.read_csv(b)
    assert len(train) + len(hold) == len(real) and 0.1 < len(hold) / len(real) < 0.3
    both = pd.concat([train, hold]).sort_values(list(real.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(both, real.sort_values(list(real.columns)).reset_index(drop=True))
    again = tmp_path / "hold2.csv"
    main(["split", str(real_csv), "--train", str(tmp_path / "t2.csv"), "--holdout", str(again), "--seed", "3"])
    assert again.read_bytes() == b.read_bytes()
    assert main(["split", str(real_csv), "--train", str(a), "--holdout", str(b), "--fraction", "1.5"]) == 2
