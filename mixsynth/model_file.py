"""The model file: a fitted ``CopulaSynthesizer`` as one ``.npz`` of arrays plus a JSON
header (no pickle), written atomically. A model part-way through the staged fit saves the
stages it has. The file holds the run's configuration once (``config``); the stages read it
from there. It holds real values (marginals, the joint's cells): it is confidential.
"""
from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np

from .config import RunConfig
from .derived import Derivation, Refinement
from .latent_columns import LatentColumn
from .layout import Layout
from .marginals import marginal_from_state
from .responses import response_from_state
from .schema import TableSpec
from .screen import ResponseScreen
from .synthesis import CategoricalJoint
from .tableio import InputError, atomic_path

FORMAT = "mixsynth-model/2"


def save_model(model, path) -> None:
    """Write ``model`` (a CopulaSynthesizer with at least its marginals fitted) to ``path``."""
    if "marginals" not in model.stages():
        raise InputError("nothing to save: fit the model (or at least fit_marginals) first")
    layout = model.layout_
    meta = {
        "format": FORMAT,
        "versions": {p: version(p) for p in ("mixsynth", "numpy", "numba")},
        "config": model.config.to_dict(), "seed": model.seed,
        "spec": layout.spec.to_dict(), "columns": [c.__dict__ for c in layout.columns],
        "responses": list(layout.responses), "method": layout.method,
        "screen": layout.screen.to_dict() if layout.screen is not None else None,
        "factors": model.factors_, "n_rows": model.n_rows_,
        "copula_rows": model.copula_rows_, "stages": model.stages(),
        "convergence": getattr(model, "convergence_", None), "marginals": {},
    }
    arrays = {f"draws/{k}": v for k, v in getattr(model, "draws_", {}).items()}
    arrays["joint/cells"], arrays["joint/counts"] = model.joint_.cells, model.joint_.counts
    arrays["rows/hashes"] = model.row_hashes_
    for r, m in enumerate(model.joint_.margins):
        arrays[f"joint/margin/{r}"] = m
    meta["derived"] = _put_states(layout.derived, "derived", arrays)
    meta["refined"] = _put_states(layout.refined, "refined", arrays)
    meta["fitted_responses"] = _put_states(getattr(model, "responses_", []), "response", arrays)
    for name, marginal in model.marginals_.items():
        m_meta, m_arrays = marginal.to_state()
        meta["marginals"][name] = {"meta": m_meta, "arrays": sorted(m_arrays)}
        for key, arr in m_arrays.items():
            arrays[f"marginal/{name}/{key}"] = arr
    with atomic_path(Path(path)) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, meta=np.array(json.dumps(meta)), **arrays)


def load_model(path):
    """The CopulaSynthesizer ``save_model`` wrote to ``path``."""
    from .model import CopulaSynthesizer
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["meta"]))
        if meta.get("format") != FORMAT:
            raise InputError(f"'{Path(path).name}' is not a {FORMAT} file: write one with `mixsynth fit`")
        arrays = {k: f[k] for k in f.files if k != "meta"}
    spec = TableSpec.from_dict(meta["spec"])
    model = CopulaSynthesizer(spec, RunConfig.from_dict(meta["config"]), meta["seed"])
    columns = tuple(LatentColumn(**{**c, "blanks": tuple(c["blanks"]), "pooled": tuple(c["pooled"]),
                                    "fixed_where_seen": tuple(c["fixed_where_seen"]),
                                    "implied": tuple(tuple(t) for t in c["implied"])})
                    for c in meta["columns"])
    model.layout_ = Layout(
        spec, columns, tuple(meta["responses"]),
        tuple(Derivation.from_state(d, _state_arrays(arrays, f"derived/{i}/")) for i, d in enumerate(meta["derived"])),
        tuple(Refinement.from_state(r, _state_arrays(arrays, f"refined/{i}/")) for i, r in enumerate(meta["refined"])),
        ResponseScreen.from_dict(meta["screen"]) if meta["screen"] else None, meta["method"])
    model.factors_, model.n_rows_ = meta["factors"], meta["n_rows"]
    model.copula_rows_ = meta.get("copula_rows", model.n_rows_)
    if "copula" in meta["stages"]:
        model.convergence_ = meta["convergence"]
        model.draws_ = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("draws/")}
    model.row_hashes_ = arrays["rows/hashes"]
    n_margins = sum(k.startswith("joint/margin/") for k in arrays)
    model.joint_ = CategoricalJoint(arrays["joint/cells"], arrays["joint/counts"],
                                    [arrays[f"joint/margin/{r}"] for r in range(n_margins)])
    if "responses" in meta["stages"]:
        model.responses_ = [response_from_state(r, _state_arrays(arrays, f"response/{i}/"))
                            for i, r in enumerate(meta["fitted_responses"])]
    model.marginals_ = {
        name: marginal_from_state(m["meta"], {a: arrays[f"marginal/{name}/{a}"] for a in m["arrays"]})
        for name, m in meta["marginals"].items()}
    return model


def _put_states(items, prefix: str, arrays: dict) -> list[dict]:
    """The metadata of each item's ``to_state()``; its arrays go into ``arrays`` under
    ``prefix/i/key``."""
    metas = []
    for i, item in enumerate(items):
        meta, state = item.to_state()
        metas.append(meta)
        arrays.update({f"{prefix}/{i}/{key}": arr for key, arr in state.items()})
    return metas


def _state_arrays(arrays: dict, prefix: str) -> dict:
    """The arrays saved under ``prefix`` (``_put_states``), keyed by what follows it."""
    return {key[len(prefix):]: arr for key, arr in arrays.items() if key.startswith(prefix)}
