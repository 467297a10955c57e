"""A chain stops at its time budget (sampler.minutes): at a round's end when the next round
would not end in time, else where it is, keeping at least MIN_BUDGET_DRAWS draws; the fit
says so and its draws are judged like any others."""
import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from mixsynth import CopulaSynthesizer, SamplerSettings, infer_spec, sampler
from mixsynth.model import stack_chains
from tables import gaussian_copula_table


@pytest.fixture(scope="module")
def table():
    return gaussian_copula_table(400, seed=2)


@pytest.fixture(scope="module")
def layout(table):
    model = CopulaSynthesizer(infer_spec(table), SamplerSettings(chains=1), seed=1).fit_marginals(table)
    return model.constraints(table), model.factors_


def fake_clock(monkeypatch, step: float):
    """time.monotonic in the sampler advances ``step`` seconds at each call."""
    calls = itertools.count()
    monkeypatch.setattr(sampler.time, "monotonic", lambda: step * next(calls))


def run(layout, settings):
    cons, k = layout
    return sampler.run_chain(cons, k, settings, np.random.SeedSequence(7))


@pytest.mark.parametrize("minutes, sweeps", [(0.5, 2_000), (1.0, 4_000)])
def test_a_round_that_would_overrun_the_budget_is_not_started(monkeypatch, layout, minutes, sweeps):
    """Rounds of 2,000, 4,000 and 8,000 sweeps at 0.01 s a sweep: after 2,000 (20 s) the next
    round would end at 40 s, after 4,000 the last at 80 s."""
    monkeypatch.setattr(sampler, "chain_converged", lambda *a: False)
    fake_clock(monkeypatch, 0.01)
    out = run(layout, SamplerSettings(sweeps=8_000, burn_in=4_000, thin=8, chains=1, minutes=minutes))
    assert int(out["sweeps"]) == sweeps and bool(out["stopped"])
    assert out["alpha"].shape[0] == 500   # the whole last round's draws


def test_a_chain_over_budget_in_its_burn_in_keeps_the_fewest_draws(monkeypatch, layout):
    fake_clock(monkeypatch, 1.0)   # past a budget of 3 s after the fourth sweep
    out = run(layout, SamplerSettings(sweeps=8_000, burn_in=4_000, thin=8, chains=1,
                                      until_converged=False, minutes=0.05))
    assert bool(out["stopped"]) and out["alpha"].shape[0] == sampler.MIN_BUDGET_DRAWS
    assert int(out["sweeps"]) == 4 + sampler.MIN_BUDGET_DRAWS
    assert np.isfinite(out["Lambda"]).all()


def test_no_budget_runs_the_whole_chain(monkeypatch, layout):
    fake_clock(monkeypatch, 100.0)
    out = run(layout, SamplerSettings(sweeps=600, burn_in=300, thin=3, chains=1, minutes=None))
    assert int(out["sweeps"]) == 600 and not bool(out["stopped"]) and out["alpha"].shape[0] == 100


def test_chains_of_unequal_length_keep_their_last_draws():
    a = {"alpha": np.arange(10.0)[:, None], "sweeps": np.array(10), "stopped": np.array(False)}
    b = {"alpha": np.arange(4.0)[:, None], "sweeps": np.array(4), "stopped": np.array(True)}
    out = stack_chains([a, b])
    assert out["alpha"].shape == (2, 4, 1) and list(out["alpha"][0, :, 0]) == [6, 7, 8, 9]
    assert list(out["sweeps"]) == [10, 4] and list(out["stopped"]) == [False, True]


def test_a_fit_the_budget_stopped_is_refused_and_says_so(tmp_path, table):
    """`mixsynth fit` with a budget of 0.12 s a chain: the fit says it did not converge, the
    report counts the stopped chain and notes it, and the release rule on it refuses."""
    real, model, syn, out = (tmp_path / n for n in ("real.csv", "model.npz", "syn.csv", "report"))
    table.to_csv(real, index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("release:\n  rules:\n    - {measure: chains_stopped_by_time_budget, max: 0}\n"
                    "    - {measure: exact_copies, max: 0}\n")

    def mixsynth(*args):
        done = subprocess.run([sys.executable, "-m", "mixsynth.cli", *args], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    shown = mixsynth("fit", str(real), "--model", str(model), "--sweeps", "400000", "--chains", "1",
                     "--minutes", "0.002", "--no-progress")
    assert "each chain stops after 0.002 min (sampler.minutes), mixed or not" in shown
    assert "not converged: 1 chain(s) reached the time budget of 0.002 min" in shown
    mixsynth("sample", str(model), "--out", str(syn))
    mixsynth("report", str(real), str(syn), "--spec", str(spec), "--model", str(model), "--out", str(out))
    report = json.loads((out / "report.json").read_text())
    decision = json.loads((out / "decision.json").read_text())
    assert report["headline"]["chains_stopped_by_time_budget"] == 1
    assert any("stopped at the time budget" in note for note in report["notes"])
    assert decision["decision"] == "reject"
    assert [r["measure"] for r in decision["rules"] if not r["passed"]] == ["chains_stopped_by_time_budget"]
