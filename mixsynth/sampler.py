"""The Gibbs sampler of the sparse factor copula (method.md section 3).

z_i = alpha + Lambda eta_i + eps_i,  eps_i ~ N(0, diag(sigma^2)),  eta_i ~ N(0, I_k),
with the multiplicative gamma process prior on Lambda (Bhattacharya and Dunson, 2011).
One chain runs in one process; ``run_chains`` spreads chains over processes.
"""
import os
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context

import numpy as np
from threadpoolctl import threadpool_limits

from .latent import LEVEL, Constraints, draw_latent, initial_latent
from .tableio import InputError
from .truncnorm import fill_normal, seed_streams

NOISE_STREAMS = 16  # blocks of rows for the factor draws; fixed so results do not depend on cores


@dataclass(frozen=True)
class Prior:
    """Hyperparameters; defaults are the authors' R code's.

    nu: degrees of freedom of the local shrinkage phi_jh ~ Gamma(nu/2, nu/2) (3).
    a1, a2: shapes of delta_1 ~ Gamma(a1, 1) and delta_l ~ Gamma(a2, 1), l >= 2 (2 and 3;
        a2 > 1 makes later factors shrink).
    a_sigma, b_sigma: sigma_j^-2 ~ Gamma(a_sigma, rate b_sigma), i.e. sigma^2 ~ IG(1, 0.3).
    alpha_var: prior variance of the categorical level intercepts, alpha_j ~ N(0, 1).
    """
    nu: float = 3.0
    a1: float = 2.0
    a2: float = 3.0
    a_sigma: float = 1.0
    b_sigma: float = 0.3
    alpha_var: float = 1.0


@dataclass(frozen=True)
class SamplerSettings:
    """Run length and layout of the MCMC.

    sweeps: total Gibbs sweeps per chain, burn_in of them discarded (10,000 and 5,000 as
        in the authors' code); thin: keep every thin-th sweep after burn-in (10, so 500
        draws a chain); chains: independent chains for R-hat (2, one per core here);
    factors: number of factors k; None picks the number of principal components of the
        starting normal scores that explain ``factor_variance`` (95%) of their variance,
        as the authors did.
    """
    sweeps: int = 10_000
    burn_in: int = 5_000
    thin: int = 10
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
    """Number of principal components of the rows of ``Zt`` (p, n) explaining ``share``."""
    corr = np.corrcoef(Zt)
    eig = np.sort(np.linalg.eigvalsh(np.nan_to_num(corr)))[::-1].clip(min=0)
    k = int(np.searchsorted(np.cumsum(eig) / eig.sum(), share) + 1)
    return max(1, min(k, Zt.shape[0]))


@dataclass
class ChainState:
    """Current values of one chain. Zt (p, n) is confidential and never leaves the chain."""
    Zt: np.ndarray
    etaT: np.ndarray     # (k, n), factors stored transposed so every product is contiguous
    Lambda: np.ndarray   # (p, k)
    prec: np.ndarray     # (p,) sigma_j^-2
    phi: np.ndarray      # (p, k)
    delta: np.ndarray    # (k,)
    alpha: np.ndarray    # (p,)


def initial_state(cons: Constraints, k: int, rng: np.random.Generator) -> ChainState:
    Zt = initial_latent(cons)
    p, n = Zt.shape
    return ChainState(Zt=Zt, etaT=rng.standard_normal((k, n)), Lambda=np.zeros((p, k)),
                      prec=np.ones(p), phi=np.ones((p, k)), delta=np.ones(k), alpha=np.zeros(p))


def sweep(st: ChainState, cons: Constraints, intercept: np.ndarray, prior: Prior,
          rng: np.random.Generator, streams: np.ndarray, noise_streams: np.ndarray) -> None:
    """One Gibbs sweep, in place: Z, Lambda, sigma, eta, phi, delta, alpha.

    ``streams`` (p, 8) drive the latent columns, ``noise_streams`` the factor draws.
    """
    p, n = st.Zt.shape
    k = st.etaT.shape[0]
    Mt = st.Lambda @ st.etaT
    Mt += st.alpha[:, None]
    draw_latent(st.Zt, Mt, 1.0 / np.sqrt(st.prec), cons, streams)

    # Products with Z - alpha are taken as Z products minus alpha terms: no (p, n) copy.
    z_sum = st.Zt.sum(axis=1)                                    # (p,)
    EtE = st.etaT @ st.etaT.T
    B = st.Zt @ st.etaT.T - np.outer(st.alpha, st.etaT.sum(axis=1))   # (Z - alpha) eta, (p, k)
    tau = np.cumprod(st.delta)
    Q = st.prec[:, None, None] * EtE + _diag_stack(st.phi * tau)  # (p, k, k)
    L = np.linalg.cholesky(Q)
    mean = np.linalg.solve(Q, (st.prec[:, None] * B)[..., None])[..., 0]
    noise = np.linalg.solve(np.swapaxes(L, 1, 2), rng.standard_normal((p, k, 1)))[..., 0]
    st.Lambda = mean + noise

    zz = np.einsum("ji,ji->j", st.Zt, st.Zt) - 2.0 * st.alpha * z_sum + n * st.alpha ** 2
    ss = zz - 2.0 * np.einsum("jh,jh->j", st.Lambda, B) + np.einsum("jh,hl,jl->j", st.Lambda, EtE, st.Lambda)
    st.prec = rng.gamma(prior.a_sigma + 0.5 * n, 1.0 / (prior.b_sigma + 0.5 * np.maximum(ss, 0.0)))

    PL = st.prec[:, None] * st.Lambda                            # (p, k)
    W = np.linalg.inv(np.eye(k) + st.Lambda.T @ PL)
    W = 0.5 * (W + W.T)
    A = (PL @ W).T                                               # (k, p)
    fill_normal(st.etaT, noise_streams)
    st.etaT = np.linalg.cholesky(W) @ st.etaT
    st.etaT += A @ st.Zt
    st.etaT -= (A @ st.alpha)[:, None]

    lam2 = st.Lambda ** 2
    st.phi = rng.gamma(0.5 * (prior.nu + 1.0), 1.0 / (0.5 * (prior.nu + tau * lam2)))
    col_ss = (st.phi * lam2).sum(axis=0)                         # (k,)
    for h in range(k):
        tau_wo = np.cumprod(st.delta)[h:] / st.delta[h]
        shape = (prior.a1 if h == 0 else prior.a2) + 0.5 * p * (k - h)
        st.delta[h] = rng.gamma(shape, 1.0 / (1.0 + 0.5 * tau_wo @ col_ss[h:]))

    s = 1.0 / (n * st.prec + 1.0 / prior.alpha_var)
    total = z_sum - st.Lambda @ st.etaT.sum(axis=1)
    draw = s * st.prec * total + np.sqrt(s) * rng.standard_normal(p)
    st.alpha = np.where(intercept, draw, 0.0)


def _diag_stack(d: np.ndarray) -> np.ndarray:
    """(p, k) -> (p, k, k) stack of diagonal matrices."""
    out = np.zeros(d.shape + (d.shape[1],))
    idx = np.arange(d.shape[1])
    out[:, idx, idx] = d
    return out


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
