"""The release gate's data expectations: a Great Expectations suite (gx 1.x, ephemeral
context) built from the spec and the real file's domain, run on a synthetic file.

The suite: the synthetic file has the real file's modelled and constant columns in order, each of the
real column's type family (numbers or text); categorical, binary and ordinal values lie
within the real levels; count and continuous values within the spec's bounds (``lower``,
``upper``); each column's missing rate within ``tolerance`` of the real one; and the
expected number of rows. ``check_synthetic`` returns per-expectation outcomes as counts
only: the results never carry a value of either file.
"""
from __future__ import annotations

import os

import pandas as pd

from .schema import TableSpec, model_view

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

import great_expectations as gx  # noqa: E402  (after the analytics switch)
import great_expectations.expectations as gxe  # noqa: E402
from great_expectations.data_context.types.base import ProgressBarsConfig  # noqa: E402

MISSING_TOLERANCE = 0.05
NUMERIC_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "Int8", "Int16", "Int32", "Int64", "float32", "float64", "Float32", "Float64", "bool"]
TEXT_TYPES = ["object", "str"]


def _numeric(dtype) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)


def build_suite(spec: TableSpec, real: pd.DataFrame, rows: int,
                tolerance: float = MISSING_TOLERANCE) -> gx.ExpectationSuite:
    """The suite for synthetic files of ``rows`` rows synthesized from ``real`` (n, columns)
    under ``spec`` (inferred from ``real``). Needs an active context (``check_synthetic``
    makes one)."""
    suite = gx.ExpectationSuite(name="mixsynth-release-gate")
    suite.add_expectation(gxe.ExpectTableColumnsToMatchOrderedList(column_list=spec.output_names))
    suite.add_expectation(gxe.ExpectTableRowCountToEqual(value=int(rows)))
    real = model_view(real, spec)   # text numbers as numbers, unreadable cells as missing
    for col in spec.columns:
        numeric = _numeric(real[col.name].dtype) and not (col.kind == "date" and col.date_format)
        types = NUMERIC_TYPES if numeric else TEXT_TYPES
        suite.add_expectation(gxe.ExpectColumnValuesToBeInTypeList(column=col.name, type_list=types))
        if col.levels:
            suite.add_expectation(gxe.ExpectColumnValuesToBeInSet(column=col.name, value_set=list(col.levels)))
        elif col.lower is not None or col.upper is not None:
            suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(
                column=col.name, min_value=col.lower, max_value=col.upper))
        missing = float(real[col.name].isna().mean())
        suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(
            column=col.name, mostly=max(0.0, 1.0 - missing - tolerance)))
        if missing - tolerance > 0:
            suite.add_expectation(gxe.ExpectColumnValuesToBeNull(column=col.name, mostly=missing - tolerance))
    return suite


def check_synthetic(frames: list[pd.DataFrame], spec: TableSpec, real: pd.DataFrame,
                    tolerance: float = MISSING_TOLERANCE) -> dict:
    """Run the suite on each synthetic frame (all of one row count) in an ephemeral context.
    Returns {success, evaluated, successful, results: [{file, expectation, column, success,
    unexpected_count}]} over every file (``file`` counts from 1); counts only, no values."""
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batches = (context.data_sources.add_pandas("mixsynth").add_dataframe_asset("synthetic")
               .add_batch_definition_whole_dataframe("whole"))
    suite = context.suites.add(build_suite(spec, real, len(frames[0]), tolerance))
    results = []
    for i, frame in enumerate(frames, start=1):
        text = {c: object for c in frame.columns if not _numeric(frame[c].dtype)}
        outcome = batches.get_batch(batch_parameters={"dataframe": frame.astype(text)}).validate(suite)
        results += [{"file": i, "expectation": r.expectation_config.type,
                     "column": r.expectation_config.kwargs.get("column"), "success": bool(r.success),
                     "unexpected_count": r.result.get("unexpected_count")}
                    for r in outcome.results]
    return {"success": all(r["success"] for r in results), "evaluated": len(results),
            "successful": sum(r["success"] for r in results), "results": results}
