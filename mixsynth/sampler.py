"""Running the copula's MCMC: settings, the choice of structure, chains in processes.

The moves of a sweep are in moves.py: a full covariance when the latent columns are few
(k = p*), the sparse factor model of method.md section 3 otherwise.
One chain runs in one process; ``run_chains`` spreads chains over processes.
"""
import os
from concurrent.futures import wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context

import numpy as np
from threadpoolctl import threadpool_limits

from .checkpoint import Checkpoint, CheckpointFolder, chain_key
from .diagnostics import Judged, chain_converged, every_entry
from .constraints import Constraints, initial_latent
from .kernels.latent import LEVEL
from .moves import ChainState, Prior, factor_sweep, full_sweep
from .tableio import InputError
from .kernels.truncnorm import seed_streams
from .workers import process_pool

NOISE_STREAMS = 16  # blocks of rows for the factor draws; fixed so results do not depend on cores
FULL_MAX_COLUMNS = 120  # latent columns up to which the copula gets a full covariance (k = p)
FIRST_ROUND_SWEEPS = 2_000  # the shortest run a chain may stop after (until_converged)
# A chain's own check is noisier than the release's (quarters of 125 draws, not of 250 over
# two chains): on a 5,000-row CPS sample one chain showed R-hat 1.053 and ESS 43 at 16,000
# sweeps where both chains together reached 1.004 and 392 at 32,000.
ROUND_RHAT = 1.08  # a chain stops once the split R-hat of its own quarters is at most this
ROUND_ESS = 50     # ... and its own bulk ESS (from quarters of 125 draws) at least this, every judged entry:
#   half the release's 100, so two chains reach it together (at 40, both chains of a 5,000-row CPS
#   sample stopped at 4,000 sweeps with a combined min ESS of 97; benchmarks/results/small.md)


@dataclass(frozen=True)
class SamplerSettings:
    """Run length and layout of the MCMC.

    sweeps: total Gibbs sweeps per chain, burn_in of them discarded; thin: keep every
        thin-th sweep after burn-in (32,000, 16,000 and 32: 500 draws a chain); chains:
        independent chains for R-hat (2, one per core here);
    until_converged: a chain may stop early, after the same run scaled down by a power of
        two (2,000 / 1,000 / 2, then 4,000, 8,000, ... sweeps; shortest FIRST_ROUND_SWEEPS),
        once the draws of that run pass its own check (split R-hat of its quarters at most
        ROUND_RHAT and bulk ESS at least ROUND_ESS on every judged entry of C). The draws
        kept are those of a fixed run of that length with the same seed. Needs burn_in =
        sweeps / 2; True by default, False when a spec or the command line sets sweeps;
    factors: number of factors k; k >= p* (the latent columns) is the full covariance
        structure. None picks it (choose_factors): full up to FULL_MAX_COLUMNS latent
        columns, else the principal components of the starting normal scores explaining
        ``factor_variance`` (95%, the authors' rule) capped at the Ledermann bound.
    """
    sweeps: int = 32_000
    burn_in: int = 16_000
    thin: int = 32
    chains: int = 2
    until_converged: bool = True
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

    def rounds(self) -> list[tuple[int, int, int]]:
        """(sweeps, burn_in, thin) of the runs a chain may stop after, shortest first; the
        last is the full run. Each is the full run divided by a power of two, exactly, with
        burn-in half its sweeps, so its draws start where the previous run ended."""
        out = [(self.sweeps, self.burn_in, self.thin)]
        if not self.until_converged or 2 * self.burn_in != self.sweeps:
            return out
        f = 2
        while not (self.burn_in % f or self.thin % f) and self.sweeps // f >= FIRST_ROUND_SWEEPS:
            out.insert(0, (self.sweeps // f, self.burn_in // f, self.thin // f))
            f *= 2
        return out

    @property
    def lengths(self) -> list[int]:
        """Sweeps of the runs a chain may stop after (``rounds``), shortest first."""
        return [length for length, _, _ in self.rounds()]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "SamplerSettings":
        """Settings from a spec's ``sampler:`` section; a run length it sets is run in full
        unless it also says ``until_converged: true``."""
        d = dict(d)
        if "sweeps" in d:
            d.setdefault("until_converged", False)
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
              progress=None, judged: Judged | None = None,
              checkpoint: Checkpoint | None = None) -> dict[str, np.ndarray]:
    """Run one chain; return its kept draws: alpha (T, p), Lambda (T, p, k), sigma2 (T, p),
    and the sweeps it ran (a 0-d array).

    With ``settings.until_converged`` the chain stops after the first of ``settings.rounds()``
    whose draws pass ``chain_converged`` on the ``judged`` quantities of C (None: every
    entry). ``progress(sweeps_done)`` is called every few sweeps when given. With a
    ``checkpoint``, the chain starts from the one saved for it, if any, and saves its state
    there every ``checkpoint.every`` seconds: the draws are those of a chain never stopped.
    """
    rng_seed, stream_seed, noise_seed = seed.spawn(3)
    rng = np.random.default_rng(rng_seed)
    streams = seed_streams(stream_seed, cons.kind.size)
    noise_streams = seed_streams(noise_seed, NOISE_STREAMS)
    st = initial_state(cons, k, rng)
    intercept = cons.kind == LEVEL
    p, T = cons.kind.size, settings.kept
    out = {"alpha": np.empty((T, p)), "Lambda": np.empty((T, p, k)), "sigma2": np.empty((T, p))}
    rounds = settings.rounds()
    if judged is None:
        judged = every_entry(p)
    r, t, start = 0, 0, 0
    key = chain_key(seed, settings, k, cons) if checkpoint is not None else ""
    saved = checkpoint.read(key) if checkpoint is not None else None
    if saved is not None:
        st = ChainState(**saved["state"])
        rng.bit_generator.state = saved["rng"]
        streams, noise_streams = saved["streams"]["latent"], saved["streams"]["noise"]
        out.update(saved["out"])
        start, r, t = saved["position"]["sweep"], saved["position"]["round"], saved["position"]["draw"]
    length, burn_in, thin = rounds[r]
    with threadpool_limits(1, user_api="blas"):  # BLAS threads would fight numba's for cores
        for it in range(start, settings.sweeps):
            sweep(st, cons, intercept, settings.prior, rng, streams, noise_streams)
            if it >= burn_in and (it - burn_in) % thin == 0:
                out["alpha"][t], out["Lambda"][t], out["sigma2"][t] = st.alpha, st.Lambda, 1.0 / st.prec
                t += 1
            last = it + 1 == length and (r + 1 == len(rounds) or chain_converged(
                out["Lambda"], out["sigma2"], judged, ROUND_RHAT, ROUND_ESS))
            if progress is not None and (it % 10 == 9 or last):
                progress(it + 1)
            if last:
                break
            if it + 1 == length:   # not yet mixed: the next round's draws start here
                r, t = r + 1, 0
                length, burn_in, thin = rounds[r]
            if checkpoint is not None and checkpoint.due():
                checkpoint.write(key, {"sweep": it + 1, "round": r, "draw": t}, st, rng,
                                 {"latent": streams, "noise": noise_streams}, out)
    out["sweeps"] = np.array(it + 1)
    return out


_COUNTER = None


def _init_worker(counter, threads):
    global _COUNTER
    _COUNTER = counter
    import numba
    numba.set_num_threads(threads)


def _chain_in_worker(index, cons, k, settings, seed, judged, checkpoint):
    def progress(done):
        _COUNTER[index] = done
    return run_chain(cons, k, settings, seed, progress, judged, checkpoint)


def run_chains(cons: Constraints, k: int, settings: SamplerSettings, seed: int,
               workers: int | None = None, monitor=None, judged: Judged | None = None,
               checkpoints: CheckpointFolder | None = None) -> dict[str, np.ndarray]:
    """Run ``settings.chains`` chains, in parallel processes when ``workers`` > 1.

    Returns draws stacked over chains: alpha (C, T, p), Lambda (C, T, p, k), sigma2 (C, T, p),
    and sweeps (C,) each ran. ``monitor(done_per_chain: list[int])`` is called while chains
    run; ``judged``: the quantities of C a chain's stopping check judges (run_chain);
    ``checkpoints``: where each chain saves its state and resumes from (run_chain).
    """
    chain_checkpoint = (lambda c: checkpoints.chain(c)) if checkpoints is not None else (lambda c: None)
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
            results.append(run_chain(cons, k, settings, s, progress, judged, chain_checkpoint(c)))
    else:
        ctx = get_context("spawn")
        counter = ctx.Array("l", settings.chains, lock=False)
        threads = max(1, cores // workers)
        env = {v: str(threads) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        saved = {v: os.environ.get(v) for v in env}
        os.environ.update(env)
        try:
            with process_pool(workers, initializer=_init_worker, initargs=(counter, threads)) as pool:
                futures = [pool.submit(_chain_in_worker, c, cons, k, settings, s, judged, chain_checkpoint(c))
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
            monitor([int(r["sweeps"]) for r in results])
    return {key: np.stack([r[key] for r in results]) for key in results[0]}
