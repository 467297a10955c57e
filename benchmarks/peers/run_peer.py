"""Runs one peer synthesizer on a training CSV and writes a synthetic CSV of the same size.

Runs inside the peer environment (``benchmarks/peers/setup.sh`` creates ``.venv-peers``);
the product never imports it: ``benchmarks/peers.py`` calls it as a subprocess.

    python run_peer.py METHOD TRAIN.csv OUT.csv --seed N [--categorical a,b,c]
                       [--visit-order a,b,c] [--epochs E]

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

``--categorical`` names the columns the product's spec treats as categorical (categorical,
binary, ordinal); every other column is numeric. SDV gets these sdtypes; CART builds
classification trees for them. Seeds: numpy, random and torch global generators are set
before fitting; SDV then samples from its own fixed seed, as it does for its users. Torch gets
one thread: on the shared 2-core machine its OpenMP threads spun (CTGAN on ncbirths took 20
minutes with the default, 1.5 minutes on a quieter machine).
"""
import argparse
import random
import sys

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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("method", choices=["sdv_gaussian_copula", "sdv_ctgan", "cart_port", "cart", "independent"])
    ap.add_argument("train")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--categorical", default="", help="comma-separated categorical columns")
    ap.add_argument("--visit-order", default=None, help="comma-separated columns (cart only)")
    ap.add_argument("--epochs", type=int, default=None, help="CTGAN epochs (default: SDV's 300)")
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
    elif args.method == "cart_port":
        syn = synthesize_cart_port(data, categorical, args.seed)
    elif args.method == "cart":
        order = args.visit_order.split(",") if args.visit_order else list(data.columns)
        if sorted(order) != sorted(data.columns):
            sys.exit("--visit-order must name every column of the training file once")
        syn = synthesize_cart(data, categorical, order, args.seed)
    else:
        syn = synthesize_independent(data, args.seed)
    assert len(syn) == len(data)
    syn.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
