"""The run configuration: one typed RunConfig, built and checked from the spec and the flags
before anything runs, stored once in the model file."""
import numpy as np
import pandas as pd
import pytest

from mixsynth import CopulaSynthesizer, RunConfig, infer_spec
from mixsynth import config, workers
from mixsynth import sampler as sampler_module
from mixsynth.cli import main
from mixsynth.config import BartSettings, SamplerSettings, SynthesisSettings, deprecations
from mixsynth.tableio import InputError


def small_table(n: int = 150, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "y": x + rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n)})


def test_a_run_length_alone_brings_its_burn_in_and_thinning():
    """`sampler: {sweeps: 8000}` burns in half and keeps 500 draws a chain, run in full; the
    flags are a level of their own: --sweeps replaces the spec's burn-in and thinning."""
    settings = RunConfig.from_spec({"sampler": {"sweeps": 8000}}).sampler
    assert (settings.sweeps, settings.burn_in, settings.thin, settings.kept) == (8000, 4000, 8, 500)
    assert not settings.until_converged and settings.lengths == [8000]
    spec = {"sampler": {"sweeps": 150000, "burn_in": 50000, "thin": 100, "chains": 2}}
    flagged = RunConfig.from_spec(spec, flags={"sweeps": 3000, "chains": None}).sampler
    assert (flagged.sweeps, flagged.burn_in, flagged.thin, flagged.chains) == (3000, 1500, 3, 2)
    assert RunConfig.from_spec(spec, flags={"chains": 1}).sampler.burn_in == 50000
    assert RunConfig().sampler.lengths == [2000, 4000, 8000, 16000, 32000, 64000]   # defaults: until converged


def test_the_spec_with_a_run_length_alone_runs(tmp_path, capsys):
    """The issue's case: `sampler: {sweeps: 8000}` in a spec was refused (burn_in above sweeps)
    while --sweeps 8000 worked; both now fit the same model."""
    small_table().to_csv(tmp_path / "real.csv", index=False)
    (tmp_path / "spec.yaml").write_text("sampler: {sweeps: 8000}\nresponses: none\n")
    assert main(["synthesize", str(tmp_path / "real.csv"), "--out", str(tmp_path / "a.csv"),
                 "--spec", str(tmp_path / "spec.yaml"), "--model", str(tmp_path / "a.npz"), "--no-progress"]) == 0
    (tmp_path / "none.yaml").write_text("responses: none\n")
    assert main(["synthesize", str(tmp_path / "real.csv"), "--out", str(tmp_path / "b.csv"), "--sweeps", "8000",
                 "--spec", str(tmp_path / "none.yaml"), "--no-progress"]) == 0
    model = CopulaSynthesizer.load(tmp_path / "a.npz")
    assert model.convergence_["sweeps_per_chain"] == [8000, 8000] and model.settings.kept == 500
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


@pytest.mark.parametrize("section, words", [
    ("bart: {tres: 10}", "bart: unknown setting(s) ['tres']"),
    ("synthesis: {row: 10}", "synthesis: unknown setting(s) ['row']"),
    ("sampler: {sweeps: 100, burn_in: 200}", "burn_in must be at least 0 and below sweeps"),
    ("sampler: {method: rlp}", "method must be one of rpl, rl"),
    ("responses: [wage]", "'wage', which is not modelled"),
    ("release: {rules: []}", "release.rules must be a non-empty list"),
])
def test_bad_settings_are_refused_before_any_chain_starts(tmp_path, capsys, monkeypatch, section, words):
    def no_chains(*args, **kwargs):
        raise AssertionError("a chain started")
    monkeypatch.setattr(sampler_module, "run_chains", no_chains)
    monkeypatch.setattr("mixsynth.model.run_chains", no_chains)
    small_table().to_csv(tmp_path / "real.csv", index=False)
    (tmp_path / "spec.yaml").write_text(section + "\n")
    code = main(["synthesize", str(tmp_path / "real.csv"), "--out", str(tmp_path / "syn.csv"),
                 "--spec", str(tmp_path / "spec.yaml"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_the_config_travels_whole_through_the_model_file(tmp_path):
    """What the model file stores is the config the fit ran with, field for field."""
    table = small_table()
    config = RunConfig(SamplerSettings(sweeps=60, burn_in=20, thin=4, chains=1), "rpl", ("y",),
                       BartSettings(trees=10, burn_in=5, draws=8, keep_every=2, warm_start=2),
                       SynthesisSettings(m=2, rows=40, rules=("x > -10",)), None)
    assert RunConfig.from_dict(config.to_dict()) == config
    CopulaSynthesizer(infer_spec(table), config, seed=1).fit(table).save(tmp_path / "m.npz")
    loaded = CopulaSynthesizer.load(tmp_path / "m.npz")
    assert loaded.config == config and loaded.layout_.responses == ("y",)
    files = loaded.sample_release(seed=0)
    assert [len(f) for f in files] == [40, 40]
    assert config.synthesis.to_dict() == {"m": 2, "rows": 40, "rules": ["x > -10"]}   # the record's form
    assert config.bart_given() == {"trees": 10, "burn_in": 5, "draws": 8, "keep_every": 2, "warm_start": 2}


def test_one_way_to_choose_responses_and_the_old_ones_still_work():
    """`responses:` is the way; `role: response` (input order) and `bart.order` are aliases
    that say they are deprecated."""
    table = small_table()
    raw = {"columns": {"y": {"role": "response"}, "x": {"role": "response"}}}
    assert RunConfig.from_spec(raw, infer_spec(table, raw).columns).responses == ("x", "y")
    assert RunConfig.from_spec({"bart": {"order": ["y", "x"], "trees": 10}}).responses == ("y", "x")
    assert RunConfig.from_spec({"bart": {"order": ["y"], "trees": 10}}).bart.trees == 10
    assert [line.split("`")[1] for line in deprecations(raw)] == ["role: response"]
    assert deprecations({"responses": ["y"]}) == []


def test_the_default_chain_count_follows_the_cores(monkeypatch):
    """ESS adds over chains: by default one chain per core, at least two (R-hat), at most eight;
    the count is resolved when the settings are built and stored with them."""
    for cores, chains in ((1, 2), (2, 2), (6, 6), (64, config.MAX_DEFAULT_CHAINS)):
        monkeypatch.setattr(workers, "cores", lambda cores=cores: cores)
        settings = RunConfig.from_spec({}).sampler
        assert settings.chains == chains
        assert SamplerSettings.from_dict(settings.to_dict()).chains == chains
    assert RunConfig.from_spec({"sampler": {"chains": 3}}).sampler.chains == 3


def test_a_deployment_declares_its_chain_slots_across_workers(monkeypatch):
    """On the celery executor each chain is a task on some worker: the chains that run at once
    are the workers' slots, not this process's cores (MIXSYNTH_CHAIN_SLOTS); no cap of eight."""
    monkeypatch.setattr(workers, "cores", lambda: 2)
    monkeypatch.setenv("MIXSYNTH_CHAIN_SLOTS", "12")
    assert RunConfig.from_spec({}).sampler.chains == 12
    monkeypatch.setenv("MIXSYNTH_CHAIN_SLOTS", "1")
    assert RunConfig.from_spec({}).sampler.chains == 2   # R-hat needs two
    monkeypatch.setenv("MIXSYNTH_CHAIN_SLOTS", "four")
    with pytest.raises(InputError, match="MIXSYNTH_CHAIN_SLOTS must be a whole number.*'four'"):
        RunConfig.from_spec({})
