"""Runs one peer synthesizer on a training CSV and writes a synthetic CSV of the same size.

Runs inside a peer environment, never the product's; the product never imports it:
``benchmarks/peers.py`` calls it as a subprocess with the environment's interpreter.
The peers' pins clash with one another, so each group has its own environment:

  .venv-peers  sdv_gaussian_copula, sdv_ctgan, cart_port, cart, independent
               (``benchmarks/peers/setup.sh``)
  .venv-arf    arf (``benchmarks/peers/setup-arf.sh``: arfpy 0.1.1 needs numpy < 2,
               pandas < 3, scikit-learn < 1.6)
  .venv-argn   tabularargn (``benchmarks/peers/setup-argn.sh``: mostlyai-engine, CPU torch)

    python run_peer.py METHOD TRAIN.csv OUT.csv --seed N [--categorical a,b,c]
                       [--visit-order a,b,c] [--epochs E] [--minutes M] [--threads T]

Methods:
  sdv_gaussian_copula  SDV GaussianCopulaSynthesizer, defaults
  sdv_ctgan            SDV CTGANSynthesizer, defaults except ``--epochs``
  cart_port            python-synthpop's CARTMethod as its README runs it: impute missing
                       values, preprocess, CART with smoothing, proper, minibucket 5 (the
                       spec's categorical columns passed as text so it treats them so). The port
                       fits each column on all the others and resamples predictors from
                       bootstrapped real rows: it has no visit order.
  cart                 synthpop's sequential CART (R ``syn(method = "cart")``, its defaults:
                       minbucket 5, no smoothing, not proper), built on scikit-learn trees:
                       the first column in the visit order is drawn from its marginal, each
                       next one from the donors of the leaf its synthetic predictors fall in,
                       of a tree fitted to the columns before it. Default order: file order.
  independent          each column resampled on its own from its empirical marginal
  arf                  arfpy's adversarial random forest with its defaults (30 trees, delta 0,
                       at most 10 adversarial rounds, early stop, min_node_size 5; forde with
                       truncated normals, then forge). arfpy takes no missing cells and treats
                       only object / category columns as categorical, so: the --categorical
                       columns go in as category dtype with a blank as a level of its own
                       (``<blank>``), synthesized like any level and written back blank; a
                       numeric column with blanks gets an indicator column (categorical
                       ``0``/``1``) and its blanks are filled with values drawn at random
                       from its observed cells (a constant fill would put a spike into the
                       leaves' truncated normals), and the synthetic cells whose indicator
                       came out ``1`` are written back blank. Numeric columns whose real
                       values are all whole numbers are rounded (arfpy draws every numeric
                       cell from a continuous truncated normal). arfpy draws from numpy's
                       global generator, which ``--seed`` sets.
  tabularargn          MOSTLY AI's open engine (mostlyai-engine, TabularARGN) through its
                       workspace steps split, analyze, encode, train, generate, in a temporary
                       workspace beside OUT (removed afterwards: it holds a copy of the
                       training rows). Its defaults (model MOSTLY_AI/Medium, value protection
                       on, its own 80/20 train / validation split with early stopping, up to
                       100 epochs) except: training capped at ``--minutes`` (default 5; the
                       engine's own default is 14,400 minutes), on the CPU with ``--threads``
                       torch threads (default 1, as for SDV), the --categorical columns
                       encoded TABULAR_CATEGORICAL (as text, written back to their values) and
                       the others TABULAR_NUMERIC_AUTO, and rare categories that value
                       protection hides replaced by a sample of the other categories
                       (``SAMPLE``) instead of the constant ``_RARE_``, so every cell is a real
                       level. Blanks are modelled by the engine itself. Seeded by the engine's
                       ``set_random_state``.

``--categorical`` names the columns the product's spec treats as categorical (categorical,
binary, ordinal); every other column is numeric. SDV gets these sdtypes; CART builds
classification trees for them. Seeds: numpy, random and torch global generators are set
before fitting; SDV then samples from its own fixed seed, as it does for its users. Torch gets
one thread: on the shared 2-core machine its OpenMP threads spun (CTGAN on ncbirths took 20
minutes with the default, 1.5 minutes on a quieter machine).
"""
import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd


def sdv_metadata(data: pd.DataFrame, categorical: set[str]):
    """Metadata detected from the data, with column kinds made to agree with the spec and
    no primary key (the files' record identifiers are excluded before synthesis)."""
    from sdv.metadata import Metadata

    metadata = Metadata.detect_from_dataframes({"table": data})
    if metadata.tables["table"].primary_key is not None:
        metadata.remove_primary_key("table")
    for column in data.columns:
        sdtype = "categorical" if column in categorical else "numerical"
        metadata.update_column(column, "table", sdtype=sdtype)
    return metadata


def synthesize_sdv(data, categorical, method, epochs):
    from sdv.single_table import CTGANSynthesizer, GaussianCopulaSynthesizer

    metadata = sdv_metadata(data, categorical)
    if method == "sdv_ctgan":
        model = CTGANSynthesizer(metadata, **({"epochs": epochs} if epochs else {}))
    else:
        model = GaussianCopulaSynthesizer(metadata)
    model.fit({"table": data})                            # SDV 2 takes and returns {table: frame}
    return model.sample(num_rows=len(data))["table"]


def synthesize_cart_port(data, categorical, seed):
    """The port's README steps. It takes every numeric column for numerical, so the spec's
    categorical columns go in as text (their values as strings) and come back to their values."""
    from synthpop import CARTMethod, DataProcessor, MissingDataHandler

    cats = [c for c in data.columns if c in categorical]
    back = {c: {str(v): v for v in data[c].dropna().unique()} for c in cats}
    data = data.astype({c: object for c in cats})
    for c in cats:
        data[c] = data[c].map(lambda v: v if pd.isna(v) else str(v))
    handler = MissingDataHandler()
    metadata = handler.get_column_dtypes(data)
    imputed = handler.apply_imputation(data, handler.detect_missingness(data))
    processor = DataProcessor(metadata)
    model = CARTMethod(metadata, smoothing=True, proper=True, minibucket=5, random_state=seed)
    model.fit(processor.preprocess(imputed))
    syn = processor.postprocess(model.sample(len(data)))[list(data.columns)]
    for c in cats:
        syn[c] = syn[c].map(back[c])
    return syn


def _codes(column: pd.Series, categorical: bool) -> np.ndarray:
    """A column as tree input: category codes (missing as its own code) or floats (NaN kept)."""
    if categorical:
        return pd.factorize(column, use_na_sentinel=False)[0].astype(float)
    return column.to_numpy(dtype=float)


def _draw_from_leaves(tree, x_real, y_real, x_syn, rng):
    """For each synthetic row, a value drawn from the real rows in the same leaf."""
    leaf_real, leaf_syn = tree.apply(x_real), tree.apply(x_syn)
    order = np.argsort(leaf_real, kind="stable")
    leaves, starts, counts = np.unique(leaf_real[order], return_index=True, return_counts=True)
    pos = np.searchsorted(leaves, leaf_syn)
    pick = starts[pos] + (rng.random(len(leaf_syn)) * counts[pos]).astype(int)
    return y_real[order[pick]]


def synthesize_cart(data, categorical, order, seed, minbucket=5):
    """synthpop's sequential CART in visit order ``order`` (values are real values drawn
    from leaf donors, as in R; a numeric column with missing cells first draws whether the
    cell is missing, then its value from a tree fitted to the rows where it is present)."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(seed)
    n = len(data)
    real = {c: _codes(data[c], c in categorical) for c in order}
    rows = {}                                             # synthetic row indices into data
    syn_x = {}
    first = order[0]
    rows[first] = rng.integers(0, n, n)
    syn_x[first] = real[first][rows[first]]
    for k, col in enumerate(order[1:], start=1):
        preds = order[:k]
        x_real = np.column_stack([real[p] for p in preds])
        x_syn = np.column_stack([syn_x[p] for p in preds])
        seed_k = int(rng.integers(2**31))
        donor = np.empty(n, dtype=int)
        if col in categorical:
            tree = DecisionTreeClassifier(min_samples_leaf=minbucket, random_state=seed_k)
            tree.fit(x_real, real[col])
            donor[:] = _draw_from_leaves(tree, x_real, np.arange(n), x_syn, rng)
        else:
            missing = np.isnan(real[col])
            present = ~missing
            syn_missing = np.zeros(n, dtype=bool)
            if missing.any():
                tree = DecisionTreeClassifier(min_samples_leaf=minbucket, random_state=seed_k)
                tree.fit(x_real, missing)
                syn_missing = missing[_draw_from_leaves(tree, x_real, np.arange(n), x_syn, rng)]
                donor[syn_missing] = np.flatnonzero(missing)[0]
            tree = DecisionTreeRegressor(min_samples_leaf=minbucket, random_state=seed_k)
            tree.fit(x_real[present], real[col][present])
            donor[~syn_missing] = _draw_from_leaves(tree, x_real[present], np.flatnonzero(present),
                                                    x_syn[~syn_missing], rng)
        rows[col] = donor
        syn_x[col] = real[col][donor]
    return pd.DataFrame({c: data[c].to_numpy()[rows[c]] for c in data.columns})


def synthesize_independent(data, seed):
    rng = np.random.default_rng(seed)
    n = len(data)
    return pd.DataFrame({c: data[c].to_numpy()[rng.integers(0, n, n)] for c in data.columns})


BLANK = "<blank>"                                         # arf: a blank categorical cell as a level


def _unique_name(name: str, taken) -> str:
    while name in taken:
        name += "_"
    return name


def synthesize_arf(data, categorical, seed):
    """arfpy's ARF with its defaults; blanks and categorical columns as the docstring says."""
    import warnings

    from arfpy import arf

    # arfpy 0.1.1 indexes Series by position, which pandas 2.3 warns about once per column and row batch
    warnings.filterwarnings("ignore", category=FutureWarning, module="arfpy")
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(index=data.index)
    back, indicators, whole, all_blank = {}, {}, {}, []
    for c in data.columns:
        col = data[c]
        if c in categorical:
            back[c] = {str(v): v for v in col.dropna().unique()}
            frame[c] = pd.Categorical(col.map(lambda v: BLANK if pd.isna(v) else str(v)))
            continue
        values = col.to_numpy(dtype=float).copy()
        missing = np.isnan(values)
        if missing.all():                                 # nothing to model: written back blank
            all_blank.append(c)
            continue
        whole[c] = bool(np.all(values[~missing] == np.round(values[~missing])))
        if missing.any():
            indicators[c] = _unique_name(f"{c}_blank", set(data.columns) | set(frame.columns))
            frame[indicators[c]] = pd.Categorical(np.where(missing, "1", "0"))
            values[missing] = rng.choice(values[~missing], int(missing.sum()))
        frame[c] = values
    np.random.seed(seed)              # arfpy's forests, pandas' .sample and scipy draw from it
    model = arf.arf(x=frame, verbose=False)
    model.forde()
    syn = model.forge(n=len(data))
    out = {}
    for c in data.columns:
        if c in all_blank:
            out[c] = pd.Series(np.nan, index=range(len(data)))
        elif c in categorical:
            out[c] = syn[c].astype(object).map(lambda v: np.nan if v == BLANK else back[c][v])
        else:
            values = syn[c].to_numpy(dtype=float)
            if whole[c]:
                values = np.round(values)
            if c in indicators:
                values[syn[indicators[c]].astype(str).to_numpy() == "1"] = np.nan
            out[c] = pd.Series(values).astype("Int64") if whole[c] else pd.Series(values)
    return pd.DataFrame(out)[list(data.columns)]


def synthesize_tabularargn(data, categorical, seed, minutes, threads, workspace_parent):
    """mostlyai-engine's TabularARGN through its workspace steps; see the docstring."""
    import torch
    from mostlyai import engine

    torch.set_num_threads(threads)
    engine.init_logging()                                 # training progress into the log
    cats = [c for c in data.columns if c in categorical]
    back = {c: {str(v): v for v in data[c].dropna().unique()} for c in cats}
    frame = data.copy()
    for c in cats:
        frame[c] = data[c].map(lambda v: v if pd.isna(v) else str(v)).astype(object)
    types = {c: "TABULAR_CATEGORICAL" if c in categorical else "TABULAR_NUMERIC_AUTO" for c in data.columns}
    workspace = Path(tempfile.mkdtemp(prefix="argn-workspace-", dir=workspace_parent))
    try:
        engine.set_random_state(seed)
        engine.split(tgt_data=frame, model_type="TABULAR", tgt_encoding_types=types, workspace_dir=workspace)
        engine.analyze(workspace_dir=workspace)
        engine.encode(workspace_dir=workspace)
        engine.train(max_training_time=minutes, device="cpu", workspace_dir=workspace)
        engine.generate(sample_size=len(data), device="cpu", rare_category_replacement_method="SAMPLE",
                        workspace_dir=workspace)
        files = sorted((workspace / "SyntheticData").glob("*.parquet"))
        syn = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    syn = syn[list(data.columns)]
    for c in cats:
        unknown = set(syn[c].dropna().astype(str)) - set(back[c])
        if unknown:
            sys.exit(f"tabularargn wrote {len(unknown)} level(s) of {c} not in the training file")
        syn[c] = syn[c].map(lambda v: v if pd.isna(v) else back[c][str(v)])
    return syn


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("method", choices=["sdv_gaussian_copula", "sdv_ctgan", "cart_port", "cart", "independent",
                                       "arf", "tabularargn"])
    ap.add_argument("train")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--categorical", default="", help="comma-separated categorical columns")
    ap.add_argument("--visit-order", default=None, help="comma-separated columns (cart only)")
    ap.add_argument("--epochs", type=int, default=None, help="CTGAN epochs (default: SDV's 300)")
    ap.add_argument("--minutes", type=float, default=5.0,
                    help="tabularargn: cap on training time in minutes (default 5)")
    ap.add_argument("--threads", type=int, default=1, help="tabularargn: torch threads (default 1)")
    args = ap.parse_args(argv)

    data = pd.read_csv(args.train)
    categorical = {c for c in args.categorical.split(",") if c}
    unknown = categorical - set(data.columns)
    if unknown:
        sys.exit(f"--categorical names columns not in {args.train}: {', '.join(sorted(unknown))}")
    random.seed(args.seed)
    np.random.seed(args.seed)
    if args.method.startswith("sdv"):
        import torch
        torch.manual_seed(args.seed)
        torch.set_num_threads(1)          # on a busy 2-core machine torch's OpenMP threads spin
        syn = synthesize_sdv(data, categorical, args.method, args.epochs)
    elif args.method == "arf":
        syn = synthesize_arf(data, categorical, args.seed)
    elif args.method == "tabularargn":
        syn = synthesize_tabularargn(data, categorical, args.seed, args.minutes, args.threads,
                                     Path(args.out).resolve().parent)
    elif args.method == "cart_port":
        syn = synthesize_cart_port(data, categorical, args.seed)
    elif args.method == "cart":
        order = args.visit_order.split(",") if args.visit_order else list(data.columns)
        if sorted(order) != sorted(data.columns):
            sys.exit("--visit-order must name every column of the training file once")
        syn = synthesize_cart(data, categorical, order, args.seed)
    else:
        syn = synthesize_independent(data, args.seed)
    if len(syn) != len(data) or list(syn.columns) != list(data.columns):
        sys.exit(f"{args.method} wrote {len(syn)} rows x {list(syn.columns)}, not {len(data)} x {list(data.columns)}")
    syn.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
