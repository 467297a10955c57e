"""Nonlinear responses: columns modelled by BART after the copula, given its columns and
the responses before them.

`design` turns model values into BART features, `bart` fits one response (the method and
its settings, `BartSettings`), `response_model` holds a fitted one (`ResponseModel`), and
`categorical` an unordered categorical response as continuation-ratio probits, with
`fit_any` and `response_from_state` choosing between the two.
"""
from .bart import BartSettings, fit_response
from .categorical import CategoricalResponse, continuation_rows, fit_any, fit_categorical, response_from_state
from .design import Design, LinearPart, Rows
from .response_model import ResponseModel

__all__ = ["BartSettings", "CategoricalResponse", "Design", "LinearPart", "ResponseModel", "Rows",
           "continuation_rows", "fit_any", "fit_categorical", "fit_response",
           "response_from_state"]
