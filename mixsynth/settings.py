"""The spec's method settings, read the same way by the command line and the pipeline."""
from __future__ import annotations

from .sampler import SamplerSettings
from .schema import TableSpec
from .tableio import InputError

SYNTHESIS_KEYS = ("rows", "m", "prior_strength", "min_cell_count", "proposals", "gibbs_steps", "rules")


def sampler_settings(sampler: dict) -> tuple[SamplerSettings, str]:
    """The MCMC settings and the method ("rpl" unless it says "rl") of a ``sampler:`` section."""
    sampler = dict(sampler)
    method = sampler.pop("method", "rpl")
    return SamplerSettings.from_dict(sampler), method


def method_settings(spec: TableSpec) -> tuple[SamplerSettings, str, dict]:
    """The spec's MCMC settings, its method ("rpl" unless ``sampler.method`` says "rl") and
    its synthesis options ({rows, m, ...}; rows defaults to the real file's, m to 1)."""
    settings, method = sampler_settings(spec.sampler)
    unknown = set(spec.synthesis) - set(SYNTHESIS_KEYS)
    if unknown:
        raise InputError(f"spec: unknown key(s) under synthesis: {sorted(unknown)}; "
                         f"allowed: {list(SYNTHESIS_KEYS)}")
    return settings, method, {"m": 1, "rows": None, **spec.synthesis}
