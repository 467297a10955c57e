"""Running the copula's MCMC: settings, the choice of structure, chains in processes.

The moves of a sweep are in moves.py: a full covariance when the latent columns are few
(k = p*), the sparse factor model of method.md section 3 otherwise.
One chain runs in one process; ``run_chains`` spreads chains over processes.
"""
import os
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context

import numpy as np
from threadpoolctl import threadpool_limits

from .latent import LEVEL, Constraints, initial_latent
from .moves import ChainState, Prior, factor_sweep, full_sweep
from .tableio import InputError
from .truncnorm import seed_streams

NOISE_STREAMS = 16  # blocks of rows for the factor draws; fixed so results do not depend on cores
FULL_MAX_COLUMNS = 120  # latent columns up to which the copula gets a full covariance (k = p)


@dataclass(frozen=True)
class SamplerSettings:
    """Run length and layout of the MCMC.

    sweeps: total Gibbs sweeps per chain, burn_in of them discarded (20,000 and 10,000:
        twice the authors' code, what a 5,000-row file needs for min bulk ESS 100); thin:
        keep every thin-th sweep after burn-in (20, so 500 draws a chain); chains:
        independent chains for R-hat (2, one per core here);
    factors: number of factors k; k >= p* (the latent columns) is the full covariance
        structure. None picks it (choose_factors): full up to FULL_MAX_COLUMNS latent
        columns, else the principal components of the starting normal scores explaining
        ``factor_variance`` (95%, the authors' rule) capped at the Ledermann bound.
    """
    sweeps: int = 20_000
    burn_in: int = 10_000
    thin: int = 20
    chains: int = 2
    factors: int | None = None
    factor_variance: float = 0.95
    prior: Prior = field(default_factory=Prior)

    def __post_init__(self):
        if not 0 <= self.burn_in < self.sweeps:
            raise InputError("sampler: burn_in must be at least 0 and below sweeps")
        if self.thin < 1 or self.chains < 1:
            raise InputError("sampler: thin and chains must be at least 1")

    @property
    def kept(self) -> int:
        """Draws kept per chain."""
        return len(range(self.burn_in, self.sweeps, self.thin))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "SamplerSettings":
        d = dict(d)
        prior = Prior(**d.pop("prior", {}))
        unknown = set(d) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise InputError(f"sampler: unknown setting(s) {sorted(unknown)}; "
                             f"allowed: {sorted(cls.__dataclass_fields__)}")
        return cls(prior=prior, **d)


def choose_factors(Zt: np.ndarray, share: float) -> int:
    """The number of factors for the starting latent values ``Zt`` (p, n).

    p (the full covariance structure) when p <= FULL_MAX_COLUMNS; otherwise the number of
    principal components explaining ``share`` of the variance (the authors' rule), capped
    at the Ledermann bound (2p + 1 - sqrt(8p + 1)) / 2, past which Lambda Lambda' and Sigma
    are not identified and a sweep costs more for nothing.
    """
    p = Zt.shape[0]
    if p <= FULL_MAX_COLUMNS:
        return p
    corr = np.corrcoef(Zt)
    eig = np.sort(np.linalg.eigvalsh(np.nan_to_num(corr)))[::-1].clip(min=0)
    k = int(np.searchsorted(np.cumsum(eig) / eig.sum(), share) + 1)
    return max(1, min(k, ledermann_bound(p)))


def ledermann_bound(p: int) -> int:
    """The largest k with (p - k)^2 >= p + k: floor((2p + 1 - sqrt(8p + 1)) / 2)."""
    return int(np.floor((2 * p + 1 - np.sqrt(8 * p + 1)) / 2 + 1e-9))


def initial_state(cons: Constraints, k: int, rng: np.random.Generator) -> ChainState:
    """Normal scores for Z, Omega = I; k = p* is the full structure (no factors kept)."""
    Zt = initial_latent(cons)
    p, n = Zt.shape
    k_eta = 0 if k >= p else k   # factors, and their shrinkage, only in the factor structure
    return ChainState(Zt=Zt, etaT=rng.standard_normal((k_eta, n)), Lambda=np.zeros((p, k)),
                      prec=np.ones(p), phi=np.ones((p, k_eta)), delta=np.ones(k_eta), alpha=np.zeros(p))


def sweep(st: ChainState, cons: Constraints, intercept: np.ndarray, prior: Prior,
          rng: np.random.Generator, streams: np.ndarray, noise_streams: np.ndarray) -> None:
    """One Gibbs sweep in place: the full structure when the state has no factors."""
    if st.etaT.shape[0] == 0:
        full_sweep(st, cons, intercept, prior, rng, streams)
    else:
        factor_sweep(st, cons, intercept, prior, rng, streams, noise_streams)


def run_chain(cons: Constraints, k: int, settings: SamplerSettings, seed: np.random.SeedSequence,
              progress=None) -> dict[str, np.ndarray]:
    """Run one chain; return its kept draws: alpha (T, p), Lambda (T, p, k), sigma2 (T, p).

    ``progress(sweeps_done)`` is called every few sweeps when given.
    """
    rng_seed, stream_seed, noise_seed = seed.spawn(3)
    rng = np.random.default_rng(rng_seed)
    streams = seed_streams(stream_seed, cons.kind.size)
    noise_streams = seed_streams(noise_seed, NOISE_STREAMS)
    st = initial_state(cons, k, rng)
    intercept = cons.kind == LEVEL
    p, T = cons.kind.size, settings.kept
    out = {"alpha": np.empty((T, p)), "Lambda": np.empty((T, p, k)), "sigma2": np.empty((T, p))}
    t = 0
    with threadpool_limits(1, user_api="blas"):  # BLAS threads would fight numba's for cores
        for it in range(settings.sweeps):
            sweep(st, cons, intercept, settings.prior, rng, streams, noise_streams)
            if it >= settings.burn_in and (it - settings.burn_in) % settings.thin == 0:
                out["alpha"][t], out["Lambda"][t], out["sigma2"][t] = st.alpha, st.Lambda, 1.0 / st.prec
                t += 1
            if progress is not None and (it % 10 == 9 or it == settings.sweeps - 1):
                progress(it + 1)
    return out


_COUNTER = None


def _init_worker(counter, threads):
    global _COUNTER
    _COUNTER = counter
    import numba
    numba.set_num_threads(threads)


def _chain_in_worker(index, cons, k, settings, seed):
    def progress(done):
        _COUNTER[index] = done
    return run_chain(cons, k, settings, seed, progress)


def run_chains(cons: Constraints, k: int, settings: SamplerSettings, seed: int,
               workers: int | None = None, monitor=None) -> dict[str, np.ndarray]:
    """Run ``settings.chains`` chains, in parallel processes when ``workers`` > 1.

    Returns draws stacked over chains: alpha (C, T, p), Lambda (C, T, p, k), sigma2 (C, T, p).
    ``monitor(done_per_chain: list[int])`` is called while chains run.
    """
    seeds = np.random.SeedSequence(seed).spawn(settings.chains)
    cores = os.cpu_count() or 1
    workers = min(settings.chains, workers or cores)
    if workers == 1:
        done = [0] * settings.chains
        results = []
        for c, s in enumerate(seeds):
            def progress(d, c=c):
                done[c] = d
                if monitor:
                    monitor(done)
            results.append(run_chain(cons, k, settings, s, progress))
    else:
        ctx = get_context("spawn")
        counter = ctx.Array("l", settings.chains, lock=False)
        threads = max(1, cores // workers)
        env = {v: str(threads) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        saved = {v: os.environ.get(v) for v in env}
        os.environ.update(env)
        try:
            with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                     initargs=(counter, threads)) as pool:
                futures = [pool.submit(_chain_in_worker, c, cons, k, settings, s)
                           for c, s in enumerate(seeds)]
                pending = set(futures)
                while pending:
                    _, pending = wait(pending, timeout=0.5)
                    if monitor:
                        monitor(list(counter))
                results = [f.result() for f in futures]
        finally:
            for v, old in saved.items():
                if old is None:
                    os.environ.pop(v, None)
                else:
                    os.environ[v] = old
        if monitor:
            monitor([settings.sweeps] * settings.chains)
    return {key: np.stack([r[key] for r in results]) for key in results[0]}
