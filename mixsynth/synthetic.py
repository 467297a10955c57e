"""Synthetic tables from a fitted model (``CopulaSynthesizer``): one posterior draw a file.

The categorical combination of each row comes from the joint, the latent rows from the
copula's draw (synthesis.py), values through the marginals; the refinements, BART responses
and derived columns follow, in that order. Rows breaking an edit rule are replaced by further
rows from the same draw; so are rows equal to a real row on every column, when they are few.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .rules import rules_hold
from .synthesis import latent_rows, uniforms
from .schema import from_codes
from .tableio import InputError

MAX_REDRAWS = 20  # rounds of replacement rows for rows breaking an edit rule or copying a real row
MAX_COPY_SHARE = 0.05  # copies of real rows above this share of a file are inherent to the table: kept, flagged


def row_hashes(frame: pd.DataFrame, unique: bool = True) -> np.ndarray:
    """(rows,) uint64 hash of each row of a model-view table (``from_codes``), sorted and
    unique with ``unique``. Kept on the model (confidential, like the joint's cells) so
    synthesis can replace a synthetic row that equals a real one."""
    h = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return np.unique(h) if unique else h


def sample_table(model, n_rows: int | None = None, seed: int = 0, draw: int | None = None,
                 prior_strength: float = 0.0, min_cell_count: int = 1, proposals: int = 20,
                 gibbs_steps: int = 200, response_draws: bool = False, rules=(), return_info: bool = False):
    """One synthetic table of ``n_rows`` rows (default: as many as the real table) from
    posterior draw ``draw`` (default: one picked by ``seed``).

    ``prior_strength`` and ``min_cell_count`` smooth the categorical joint (see
    CategoricalJoint.sample); ``proposals`` and ``gibbs_steps`` tune the draw of the
    factors given the categorical combination (see synthesis.latent_rows);
    ``response_draws`` draws BART responses from one stored forest per file instead of
    the posterior mean; ``rules`` are edit rules (mixsynth.rules): rows breaking one are
    replaced by further rows from the same draw. So are rows equal to a real row on every
    column, when they are at most MAX_COPY_SHARE of the file (``copies_replaced`` in the
    info); above that, most combinations are common in the real file, and the copies are
    kept and counted (``copies_kept``): removing them would distort it. With ``return_info``,
    also returns a dict with the draw used, the share of rows whose factors were drawn
    exactly (``exact_share``), the share of first-round rows replaced for breaking a rule
    (``rule_rejected_share``) and, for the RL baseline, the share of rows whose dummies
    named several levels of a categorical (``multiply_classified``) and the share with
    every dummy off (``unclassified``, decoded as the base level).
    """
    missing = [s for s in ("marginals", "copula", "responses") if s not in model.stages()]
    if missing:
        raise InputError(f"the model is not fitted yet (missing stage: {', '.join(missing)}); "
                         "finish the fit before sampling")
    n_rows = model.n_rows_ if n_rows is None else int(n_rows)
    if n_rows < 1:
        raise InputError("rows: the number of synthetic rows must be at least 1")
    pick_seed, row_seed, redraw_seed = np.random.SeedSequence(seed).spawn(3)
    if draw is None:
        draw = int(np.random.default_rng(pick_seed).integers(model.n_draws_))
    options = (prior_strength, min_cell_count, proposals, gibbs_steps, response_draws)
    frame, info = _rows(model, n_rows, draw, row_seed, *options)
    copies = _copies(model, frame)
    replace_copies = bool(copies.any()) and copies.mean() <= MAX_COPY_SHARE
    info["copies_replaced"] = int(copies.sum()) if replace_copies else 0
    if copies.any() and not replace_copies:
        info["copies_kept"] = int(copies.sum())   # most combinations are common: removing them would bias

    def keep(batch: pd.DataFrame, batch_copies: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows meeting every rule, rows kept: meeting them and, if replaced, no copy)."""
        rules_ok = rules_hold(batch, rules) if rules else np.ones(len(batch), bool)
        return rules_ok, rules_ok & ~(batch_copies & replace_copies)

    if rules or replace_copies:
        rules_ok, ok = keep(frame, copies)
        if rules:
            info["rule_rejected_share"] = float(1.0 - rules_ok.mean())
        parts, have = [frame[ok]], int(ok.sum())
        for batch_seed in redraw_seed.spawn(MAX_REDRAWS):
            if have >= n_rows:
                break
            accept = max(ok.mean(), 0.01)
            batch, _ = _rows(model, max(int(1.5 * (n_rows - have) / accept), 200), draw, batch_seed, *options)
            _, ok = keep(batch, _copies(model, batch))
            parts.append(batch[ok])
            have += int(ok.sum())
        if have < n_rows:
            raise InputError("synthesis rules: too few synthetic rows meet every rule; check that the "
                             "rules describe the real file (a rule the model can rarely meet stalls here)")
        frame = pd.concat(parts, ignore_index=True).iloc[:n_rows]
    info.update(draw=draw)
    return (frame, info) if return_info else frame


def sample_files(model, m: int, n_rows: int | None = None, seed: int = 0, **options) -> list[pd.DataFrame]:
    """The m files of a release: ``[sample_table(seed)]`` for one, else m tables from m
    different posterior draws (needs m <= the stored draws)."""
    if m == 1:
        return [sample_table(model, n_rows, seed, **options)]
    if not 1 <= m <= model.n_draws_:
        raise InputError(f"m must be between 1 and the {model.n_draws_} stored posterior draws; "
                         "keep more draws (more sweeps or less thinning) for more files")
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    draws = rng.choice(model.n_draws_, size=m, replace=False)
    seeds = np.random.SeedSequence(seed).generate_state(m)
    return [sample_table(model, n_rows, int(s), int(d), **options) for s, d in zip(seeds, draws)]


def _copies(model, frame: pd.DataFrame) -> np.ndarray:
    """(rows,) bool: the synthetic rows equal to a real row on every column (missing
    equals missing), by the real rows' hashes."""
    return np.isin(row_hashes(frame, unique=False), model.row_hashes_)


def _rows(model, n_rows: int, draw: int, seed: np.random.SeedSequence, prior_strength, min_cell_count,
          proposals, gibbs_steps, response_draws) -> tuple[pd.DataFrame, dict]:
    """``n_rows`` synthetic rows from posterior draw ``draw`` and their info (sample_table)."""
    cell_seed, latent_seed, response_seed, refine_seed = seed.spawn(4)
    layout = model.layout_
    sources = layout.sources
    cat_codes = model.joint_.sample(n_rows, np.random.default_rng(cell_seed), prior_strength, min_cell_count)
    Z, exact = latent_rows(model.draw(draw), list(layout.columns), cat_codes, sources, latent_seed,
                           proposals, gibbs_steps)
    values, info, response_blanks = _decode(model, Z, cat_codes, sources)
    refine_rng = np.random.default_rng(refine_seed)
    for r in layout.refined:   # before the responses, which BART draws given these values
        values[r.name], redrawn = r.apply(values[r.name], values[r.by], refine_rng)
        info[f"redrawn_share/{r.name}"] = redrawn / n_rows   # rows drawn again within their level
    rng = np.random.default_rng(response_seed)
    for response in model.responses_:
        blank = np.broadcast_to(response_blanks.get(response.name, False), n_rows)
        y = response.draw_values(response.design.matrix(values), model.marginals_[response.name], rng,
                                 draw if response_draws else None, ~blank)
        values[response.name] = np.where(blank, np.nan, y)
    for d in layout.derived:
        values[d.name] = d.apply(values[d.source])
    info["exact_share"] = exact
    return from_codes(values, layout.spec), info


def _decode(model, Z: np.ndarray, cat_codes: np.ndarray, sources: list[str]):
    """Latent rows (p, n) -> model values of the copula's columns (blanks applied), RL
    classification info, and the blanks of the responses (column -> (n,) bool)."""
    n = Z.shape[1]
    values = {s: np.where(cat_codes[r] < 0, np.nan, cat_codes[r]).astype(float) for r, s in enumerate(sources)}
    info = {}
    dummies: dict[str, list[tuple[int, np.ndarray]]] = {}
    missing = {}
    for j, c in enumerate(model.layout_.columns):
        if c.role == "level":
            continue
        y = model.marginals_[c.name].ppf(uniforms(Z[j]))
        for source, level, value in c.implied:
            y = np.where(cat_codes[sources.index(source)] == level, value, y)
        if c.role == "value":
            values[c.source] = y
            if c.blanks:   # a binary whose value spells a skip pattern
                missing.update(dict.fromkeys(c.blanks, y == c.blank_when))
        elif c.role == "missing":
            missing.update(dict.fromkeys(c.blanks, y > 0.5))
        else:
            dummies.setdefault(c.source, []).append((c.level, y > 0.5))
    if dummies:
        multi = np.zeros(n, bool)
        none = np.zeros(n, bool)
        for src, parts in dummies.items():
            on = np.stack([hit for _, hit in parts])
            levels = np.array([lv for lv, _ in parts])
            count = on.sum(axis=0)
            multi |= count > 1
            none |= count == 0
            values[src] = np.where(count == 0, 0, levels[np.argmax(on, axis=0)]).astype(float)
        info["multiply_classified"] = float(multi.mean())
        info["unclassified"] = float(none.mean())
    responses = set(model.layout_.responses)
    for src, blank in missing.items():
        if src not in responses:
            values[src] = np.where(blank, np.nan, values[src])
    return values, info, {src: b for src, b in missing.items() if src in responses}
