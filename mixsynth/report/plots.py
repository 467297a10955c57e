"""The report's figures (matplotlib, drawn for the HTML page): real beside synthetic
distributions, the association heatmaps, and the paper's coefficient plot; `inline_png`
turns one into an <img> tag holding its PNG.
"""
from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402

from .markup import label  # noqa: E402

REAL, SYNTHETIC = "#444444", "#d95f02"


def distribution_figure(dists: list[dict]):
    """Real beside synthetic shares per bin or level, one panel per entry of the report's
    ``distributions`` (four panels a row)."""
    cols = 4
    rows = -(-len(dists) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(12, 2.4 * rows), squeeze=False)
    for ax in axes.flat[len(dists):]:
        ax.axis("off")
    for ax, d in zip(axes.flat, dists):
        real = np.array([np.nan if v is None else v for v in d["real"]])
        syn = np.array(d["synthetic"])
        x = np.arange(len(syn))
        if d["treated_as"] == "categorical":
            ticks = [label(v) for v in d["labels"]]
        else:
            e = d["edges"]
            ticks = ["<"] + [f"{v:.4g}" for v in e[:-1]] + [">", "NA"]
            if real[-1] == 0 and syn[-1] == 0:  # no missing values: drop the NA bin
                x, real, syn, ticks = x[:-1], real[:-1], syn[:-1], ticks[:-1]
        ax.bar(x - 0.2, np.nan_to_num(real), 0.4, color=REAL, label="real")
        ax.bar(x + 0.2, syn, 0.4, color=SYNTHETIC, label="synthetic")
        step = max(1, len(ticks) // 8)
        ax.set_xticks(x[::step])
        ax.set_xticklabels([str(t)[:10] for t in ticks[::step]], rotation=45, ha="right", fontsize=7)
        title = d["column"] + (f" ({d['suppressed']} small bins hidden)" if d["suppressed"] else "")
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def association_matrices(a: dict):
    """Columns and (real, synthetic) association matrices on one 0-1 scale: Cramer's V,
    |Pearson| and eta."""
    pairs = [(p["a"], p["b"], p["v_real"], p["v_synthetic"]) for p in a["categorical_pairs"]]
    pairs += [(p["a"], p["b"], _abs(p["pearson_real"]), _abs(p["pearson_synthetic"])) for p in a["numeric_pairs"]]
    pairs += [(p["categorical"], p["numeric"], p["eta_real"], p["eta_synthetic"]) for p in a["mixed_pairs"]]
    names = list(dict.fromkeys(n for p in pairs for n in p[:2]))
    index = {n: i for i, n in enumerate(names)}
    real, syn = np.full((2, len(names), len(names)), np.nan)
    for x, y, r, s in pairs:
        for m, v in ((real, r), (syn, s)):
            m[index[x], index[y]] = m[index[y], index[x]] = np.nan if v is None else v
    return names, real, syn


def association_figure(names: list[str], real: np.ndarray, syn: np.ndarray):
    """Two heatmaps of (k, k) association matrices over ``names``: the real file's, and
    synthetic minus real."""
    size = min(16, 3 + 0.25 * len(names))
    fig, axes = plt.subplots(1, 2, figsize=(2 * size + 1, size))
    panels = ((real, "association in the real file (V, |r|, eta)", "viridis", 0, 1),
              (syn - real, "synthetic - real", "RdBu", -0.3, 0.3))
    for ax, (m, title, cmap, lo, hi) in zip(axes, panels):
        im = ax.imshow(m, cmap=cmap, vmin=lo, vmax=hi)
        ax.set_xticks(range(len(names)))
        ax.set_yticks(range(len(names)))
        fs = 8 if len(names) <= 20 else 5
        ax.set_xticklabels(names, rotation=90, fontsize=fs)
        ax.set_yticklabels(names, fontsize=fs)
        ax.set_title(title, fontsize=10)
        fig.colorbar(im, ax=ax, shrink=0.7)
    fig.tight_layout()
    return fig


def coefficient_figure(terms: list[dict]):
    """The paper's Figure 3: each coefficient's 95% interval, real above synthetic."""
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(terms) + 1))
    y = np.arange(len(terms))[::-1]
    for yi, t in zip(y, terms):
        ax.plot([t["real_lower"], t["real_upper"]], [yi + 0.15] * 2, color=REAL, lw=2)
        ax.plot([t["synthetic_lower"], t["synthetic_upper"]], [yi - 0.15] * 2, color=SYNTHETIC, lw=2)
        ax.plot(t["real"], yi + 0.15, "o", color=REAL, ms=4)
        ax.plot(t["synthetic"], yi - 0.15, "o", color=SYNTHETIC, ms=4)
    ax.axvline(0, color="#999", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([t["term"] for t in terms], fontsize=8)
    ax.plot([], [], color=REAL, lw=2, label="real")
    ax.plot([], [], color=SYNTHETIC, lw=2, label="synthetic")
    ax.legend(fontsize=8, loc="best")
    ax.set_xlabel("coefficient with 95% interval")
    fig.tight_layout()
    return fig


def inline_png(fig) -> str:
    """A figure as a paragraph holding its 72 dpi PNG inline (base64); the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72)
    plt.close(fig)
    return f"<p><img alt='plot' src='data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}'></p>"


def _abs(v):
    return None if v is None else abs(v)
