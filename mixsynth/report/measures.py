"""The report's headline measures: names, what each means, and which are disclosure risk.

Light to import (no statistics libraries), for code that only lays the headline out.
"""

HEADLINE_MEASURES = {
    "mean_cio": "mean confidence-interval overlap of the first declared regression "
                "(combined interval when m > 1); 1 is perfect",
    "mean_std_sq_diff": "mean standardized squared coefficient difference of the first regression",
    "max_cramers_v_drop": "largest fall of Cramer's V over categorical pairs (real - synthetic)",
    "n_flagged_pairs": "categorical pairs whose Cramer's V falls by more than the drop flag",
    "drift_score": "Frobenius norm of corr_real - corr_syn on the encoded columns (look above 0.5)",
    "exact_copies": "synthetic rows equal to a real row on all columns, summed over the files",
    "exact_copies_unique_quasi": "synthetic rows whose quasi-identifier combination belongs to one "
                                 "real row only (first file)",
    "max_attribute_lift": "largest attribute-inference lift over the sensitive columns",
    "pmse_ratio": "pMSE over its null expectation (synthpop's S_pMSE; about 1 is good)",
    "propensity_auc": "out-of-fold ROC AUC of a gradient-boosting classifier telling real from synthetic "
                      "rows, mean over the files (0.5 indistinguishable; sees broken dependence)",
    "dcr_share_below_holdout_q05": "share of synthetic rows closer to a real row than 95% of "
                                   "held-out real rows are (about 0.05 expected)",
    "min_tstr_difference": "smallest TSTR score difference (synthetic-trained - real-trained)",
    "max_outlier_r2": "largest outlier attribute-disclosure R^2 at either end (near 0 protective)",
    "max_rhat": "largest R-hat of the copula correlations over the chains (below 1.01-1.1 means "
                "converged; from the model)",
    "min_ess_bulk": "smallest bulk effective sample size of the copula correlations (from the model)",
    "chains_stopped_by_time_budget": "chains that reached sampler.minutes before their own convergence "
                                     "check passed (from the model; 0 when none did)",
    "anonymeter_singling_out": "anonymeter singling-out risk (0 to 1; needs a holdout and the anonymeter "
                               "environment)",
    "anonymeter_linkability": "anonymeter linkability risk, quasi-identifiers against the other columns",
    "anonymeter_max_inference": "largest anonymeter inference risk over the sensitive columns",
}

# headline measures of the disclosure-risk report; the others are the utility report's
RISK_MEASURES = ("exact_copies", "exact_copies_unique_quasi", "max_attribute_lift", "dcr_share_below_holdout_q05",
                 "max_outlier_r2", "anonymeter_singling_out", "anonymeter_linkability", "anonymeter_max_inference")


def show_value(v) -> str:
    """A measure's value for a table: 4 significant digits, "n/a" when not computed."""
    return "n/a" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)
