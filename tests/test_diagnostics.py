"""The convergence headline's quantities: what the data fix, computed from C."""
import numpy as np

from mixsynth.config import RunConfig
from mixsynth.diagnostics import judged_entries
from mixsynth.latent_columns import LatentColumn


def test_correlations_where_a_column_is_seen_match_the_selected_rows():
    """A column blanked where a binary is 0 (share 0.7) is judged by its correlations among
    the rows where the binary is 1; Pearson-Lawley on C gives the correlation a large
    sample shows among those rows, and plain entries stay plain."""
    rng = np.random.default_rng(5)
    C = np.array([[1.0, 0.5, 0.6, 0.2],   # positive definite
                  [0.5, 1.0, 0.5, 0.3],
                  [0.6, 0.5, 1.0, 0.1],
                  [0.2, 0.3, 0.1, 1.0]])
    columns = [LatentColumn("yrdth", "yrdth", "value"), LatentColumn("age", "age", "value"),
               LatentColumn("death", "death", "value", blanks=("yrdth",), blank_when=0.0, blank_share=0.7),
               LatentColumn("weight", "weight", "value")]
    judged = judged_entries(columns)
    pairs = list(zip(judged.a.tolist(), judged.b.tolist()))
    assert (0, 2) not in pairs                       # yrdth ~ death: not fixed by the data
    Z = rng.multivariate_normal(np.zeros(4), C, size=400_000)
    seen = Z[:, 2] > np.quantile(Z[:, 2], 0.7)
    values = judged.values(C)
    for k, (a, b) in enumerate(pairs):
        if judged.seen[k] >= 0:
            assert 0 in (a, b)
            expected = np.corrcoef(Z[seen, a], Z[seen, b])[0, 1]
        else:
            assert 0 not in (a, b)
            expected = C[a, b]
        assert abs(values[k] - expected) < 0.01, (a, b, values[k], expected)
    assert abs(values[pairs.index((0, 1))] - C[0, 1]) > 0.1   # the selection matters here


def test_a_column_the_selection_leaves_constant_is_not_judged_with_what_it_blanks():
    """pregnancies is blank for every man (and a few women): where it is seen sex is
    constant, so sex ~ pregnancies among those rows is fixed by no row and left out; age ~
    pregnancies stays, judged where seen; a rare binary (7 rows) stays too, and so does a
    column blank in 5% of the rows, judged where pregnancies is seen."""
    import pandas as pd
    from mixsynth import CopulaSynthesizer, infer_spec

    rng = np.random.default_rng(2)
    n = 1200
    sex = rng.choice(["m", "f"], n)
    age = rng.normal(45, 12, n)
    pregnancies = np.where(sex == "f", rng.poisson(np.clip((age - 15) / 10, 0, None)), np.nan)
    pregnancies[np.flatnonzero(sex == "f")[:40]] = np.nan
    rare = np.zeros(n, int)
    rare[:7] = 1
    weight = np.where(rng.random(n) < 0.05, np.nan, rng.normal(70, 10, n))
    table = pd.DataFrame({"sex": sex, "age": age, "pregnancies": pregnancies, "rare": rare, "weight": weight})
    model = CopulaSynthesizer(infer_spec(table), RunConfig(responses="none")).fit_marginals(table)
    labels = judged_entries(model.columns_).labels([c.name for c in model.columns_])
    assert [c.fixed_where_seen for c in model.columns_ if c.role == "missing"] == [("sex",), ()]
    assert not [x for x in labels if "sex" in x and "pregnancies" in x.replace("pregnancies:missing", "")]
    assert "sex ~ pregnancies:missing" in labels
    assert "age ~ pregnancies (where seen)" in labels
    assert "pregnancies ~ rare (where seen)" in labels
    assert "pregnancies ~ weight (where seen)" in labels   # two selections: the wider one's rows


def test_compiled_rhat_and_ess_are_arvizs():
    """chain_stats computes arviz's rank-normalized split R-hat, bulk and tail ESS for every
    quantity at once: the same numbers on mixed and unmixed draws, long autocorrelations,
    ties, an odd length and one chain split in two."""
    import arviz as az

    from mixsynth.diagnostics import entry_diagnostics

    rng = np.random.default_rng(0)
    for chains, T, phi in ((2, 101, 0.9), (4, 400, 0.99), (2, 24, 0.0), (1, 60, 0.5)):
        x = np.zeros((chains, T, 12))
        for t in range(1, T):
            x[:, t] = phi * x[:, t - 1] + rng.normal(size=(chains, 12))
        x[:, :, 0] += np.arange(chains)[:, None] * 5.0 / np.sqrt(1 - phi ** 2)   # chains apart: not mixed
        x[:, :, 1] = np.round(x[:, :, 1])                     # heavy ties
        got = entry_diagnostics(x)
        if chains == 1:
            x = x[:, : T // 2 * 2].reshape(2, T // 2, -1)
        ds = az.convert_to_dataset({"C": x})
        want = (az.rhat(ds)["C"].values, az.ess(ds, method="bulk")["C"].values, az.ess(ds, method="tail")["C"].values)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-9)
        if chains > 1:
            assert got[0][0] > max(1.5, got[0][2:].max())   # the unmixed entry is seen as such
