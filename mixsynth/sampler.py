"""Running the copula's MCMC: the choice of structure, one chain, chains in processes.

The moves of a sweep are in moves.py: a full covariance when the latent columns are few
(k = p*), the sparse factor model of method.md section 3 otherwise.
One chain runs in one process; ``run_chains`` spreads chains over processes.
"""
import os
import time
from multiprocessing import get_context

import numpy as np
from threadpoolctl import threadpool_limits

from .checkpoint import Checkpoint, CheckpointFolder, chain_key
from .config import SamplerSettings
from .diagnostics import Judged, chain_converged, every_entry
from .config import Prior
from .constraints import Constraints, initial_latent
from .kernels.latent import LEVEL
from .moves import ChainState, factor_sweep, full_sweep
from .kernels.truncnorm import seed_streams
from .workers import cores as available_cores, map_in_processes

NOISE_STREAMS = 16  # blocks of rows for the factor draws; fixed so results do not depend on cores
FULL_MAX_COLUMNS = 300  # latent columns up to which the copula gets a full covariance (k = p):
# on the whole KDD file's 153 latent columns it took 62 ms a sweep against the factor model's
# 87 (k = 92) and left a median R-hat of 1.226 after 3,000 sweeps against 1.383; on 261
# (rare levels pooled below 0.3%) 0.21 s against 0.28 (k = 161). Above 300 its kept draws
# of Omega (chains x 500 x p x p) pass 700 MB.
# A chain's own check is noisier than the release's (quarters of 125 draws, not of 250 over
# two chains), so it asks for half the release's ESS: two chains reach the release's together
# (benchmarks/RESULTS.md, "small files", has the runs behind both numbers).
ROUND_RHAT = 1.08  # a chain stops once the split R-hat of its own quarters is at most this
ROUND_ESS = 50     # ... and its own bulk ESS (from quarters of 125 draws) at least this, every judged entry
MIN_BUDGET_DRAWS = 20  # draws a chain stopped by its time budget still keeps (taken every sweep if need be)


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
    the sweeps it ran and whether its time budget stopped it (0-d arrays).

    With ``settings.until_converged`` the chain stops after the first of ``settings.rounds()``
    whose draws pass ``chain_converged`` on the ``judged`` quantities of C (None: every
    entry). ``progress(sweeps_done)`` is called every few sweeps when given. With a
    ``checkpoint``, the chain starts from the one saved for it, if any, and saves its state
    there every ``checkpoint.every`` seconds: the draws are those of a chain never stopped.

    With ``settings.minutes``, a chain that has run that long (counted from its start or
    resumption) stops: at the end of a round when the next would not end within the budget
    at the pace so far, else at once, with the draws of its current round (taken every sweep
    until there are MIN_BUDGET_DRAWS when it has fewer). Such draws have not been checked:
    ``convergence`` judges them, and the release rules refuse them unless they mixed.
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
    budget = np.inf if settings.minutes is None else 60.0 * settings.minutes
    least = min(MIN_BUDGET_DRAWS, T)
    began, stopped = time.monotonic(), False
    with threadpool_limits(1, user_api="blas"):  # BLAS threads would fight numba's for cores
        for it in range(start, settings.sweeps):
            sweep(st, cons, intercept, settings.prior, rng, streams, noise_streams)
            if stopped or (it >= burn_in and (it - burn_in) % thin == 0):
                out["alpha"][t], out["Lambda"][t], out["sigma2"][t] = st.alpha, st.Lambda, 1.0 / st.prec
                t += 1
            last = it + 1 == length and (r + 1 == len(rounds) or chain_converged(
                out["Lambda"][:t], out["sigma2"][:t], judged, ROUND_RHAT, ROUND_ESS))
            if not last and budget < np.inf:
                if not stopped:
                    spent = time.monotonic() - began
                    if it + 1 == length:   # would the next round end within the budget?
                        stopped = spent + spent / (it + 1 - start) * (rounds[r + 1][0] - it - 1) > budget
                    else:
                        stopped = spent > budget
                last = stopped and t >= least
            if progress is not None and (it % 10 == 9 or last):
                progress(it + 1)
            if last:
                break
            if it + 1 == length and not stopped:   # not yet mixed: the next round's draws start here
                r, t = r + 1, 0
                length, burn_in, thin = rounds[r]
            if checkpoint is not None and checkpoint.due():
                checkpoint.write(key, {"sweep": it + 1, "round": r, "draw": t}, st, rng,
                                 {"latent": streams, "noise": noise_streams}, out)
    out = {key: draws[:t] for key, draws in out.items()}
    out["sweeps"], out["stopped"] = np.array(it + 1), np.array(stopped)
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
    cores = available_cores()
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
            jobs = [(c, cons, k, settings, s, judged, chain_checkpoint(c)) for c, s in enumerate(seeds)]
            results = map_in_processes(_chain_in_worker, jobs, workers, _init_worker, (counter, threads),
                                       (lambda: monitor(list(counter))) if monitor else None)
        finally:
            for v, old in saved.items():
                if old is None:
                    os.environ.pop(v, None)
                else:
                    os.environ[v] = old
        if monitor:
            monitor([int(r["sweeps"]) for r in results])
    return stack_chains(results)


def stack_chains(results: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``run_chain`` results stacked over chains (C, T, ...): a chain stopped by its time
    budget may hold fewer draws, so each keeps its last T, the fewest any chain holds."""
    T = min(len(r["alpha"]) for r in results)
    return {key: np.stack([r[key][len(r[key]) - T:] if r[key].ndim else r[key] for r in results])
            for key in results[0]}
