"""The copula's posterior: one graph-backed asset whose graph runs one step per MCMC chain.

The graph is ``list_chains -> run_chain`` (one step per chain) ``-> combine_chains``.
``list_chains`` reads the wave's model (``model-marginals.npz``, built with the wave's stored
config) and yields one dynamic output per chain it asks for, so the chain count follows the
wave, not the spec as it was when the code location loaded. Each chain step runs in its own
process on the multiprocess and celery executors, so the chains run side by side. Only chain
numbers pass between these steps (through Dagster's IO manager); draws and models stay in
the confidential store.
"""

import contextlib
import os
import time

import dagster as dg

from mixsynth.checkpoint import CHECKPOINT_SECONDS, Checkpoint
from mixsynth.workers import cores
from resources import ConfidentialStore

from .metadata import number, withheld_details
from .stages import AFTER_CHAINS, AFTER_POSTERIOR, CHECKPOINTS, SurveyStages


@contextlib.contextmanager
def chain_threads(chains: int):
    """Give a chain step its share of the machine's cores for the sampler's numba threads, as
    ``mixsynth.sampler.run_chains`` gives each chain process (``MIXSYNTH_CHAIN_THREADS``
    overrides it, e.g. on executors that run each step on its own machine); yields the
    count and restores the previous one."""
    import numba
    before = numba.get_num_threads()
    threads = int(os.environ.get("MIXSYNTH_CHAIN_THREADS") or max(1, cores() // chains))
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(before)


class ChainProgress:
    """Log a chain's sweeps while it runs: at each tenth of the run and at least every
    ``every`` seconds, so a terminal following the run (``make demo``) never sits silent for
    long. Counts and rates only."""

    def __init__(self, log, chain: int, total: int, every: float = 20.0):
        self.log, self.chain, self.total, self.every = log, chain, total, every
        self.started = self.last = time.monotonic()
        self.step = max(1, total // 10)
        self.next = self.step

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if done < self.next and now - self.last < self.every and done < self.total:
            return
        while self.next <= done:
            self.next += self.step
        self.last = now
        rate = done / (now - self.started) if now > self.started else 0.0
        self.log.info(f"chain {self.chain}: {done:,}/{self.total:,} sweeps ({100 * done // self.total}%, "
                      f"{number(rate)} sweeps/s)")


def posterior_asset(s: SurveyStages, upstream: dg.AssetsDefinition) -> dg.AssetsDefinition:
    """``<survey>/copula_posterior``; its ops are ``<survey>_list_chains``, ``<survey>_run_chain``
    and ``<survey>_combine_chains`` (an op's name must be unique across the code location)."""
    name = s.name

    @dg.op(name=f"{name}_list_chains", ins={"marginals": dg.In(dg.Nothing)}, out=dg.DynamicOut(int))
    def list_chains(context: dg.OpExecutionContext, confidential: ConfidentialStore):
        """One output per chain of the wave's model (mapping keys ``chain_0``, ``chain_1``, ...)."""
        wave = context.partition_key
        count = confidential.load_model(name, wave, "model-marginals.npz").settings.chains
        context.log.info(f"{count} chains, as the wave's config asks; each its own step")
        for chain in range(count):
            yield dg.DynamicOutput(chain, mapping_key=f"chain_{chain}")

    @dg.op(name=f"{name}_run_chain", out=dg.Out(int))
    def run_chain(context: dg.OpExecutionContext, confidential: ConfidentialStore, chain: int):
        """Run MCMC chain ``chain`` and save its kept draws of alpha, Lambda and sigma^2
        (``chain-<chain>.npz``); its figures are the output's metadata."""
        wave = context.partition_key
        train = confidential.read_table(name, wave, "train.parquet")
        model = confidential.load_model(name, wave, "model-marginals.npz")
        settings = model.settings
        confidential.discard(name, wave, f"chain-{chain}.npz", f".chain-{chain}.npz.*.tmp", *AFTER_CHAINS)
        started = time.monotonic()
        with withheld_details(f"running chain {chain}"), chain_threads(settings.chains) as threads:
            lengths = settings.lengths
            plan = (f"{settings.sweeps:,} sweeps ({settings.burn_in:,} burn-in)" if len(lengths) == 1 else
                    f"until its draws have mixed, checked after {', '.join(f'{x:,}' for x in lengths)} sweeps "
                    "(the first half of a run is burn-in)")
            context.log.info(f"chain {chain}: {plan} on {threads} thread(s)")
            checkpoint = Checkpoint(confidential.target(name, wave, f"{CHECKPOINTS}/chain-{chain}.npz"),
                                    float(os.environ.get("MIXSYNTH_CHECKPOINT_SECONDS") or CHECKPOINT_SECONDS))
            draws = model.run_chain(train, chain, ChainProgress(context.log, chain, settings.sweeps), checkpoint)
            if checkpoint.resumed_at:
                context.log.info(f"chain {chain}: went on from its checkpoint at sweep {checkpoint.resumed_at:,}")
            confidential.save_arrays(draws, name, wave, f"chain-{chain}.npz")
        seconds = time.monotonic() - started
        swept = int(draws["sweeps"])
        return dg.Output(chain, metadata={
            "chain": chain, "sweeps": swept, "burn_in": swept // 2 if len(lengths) > 1 else settings.burn_in,
            "kept_draws": len(draws["alpha"]), "stopped_by_time_budget": bool(draws["stopped"]),
            "threads": threads, "seconds": number(seconds),
            "resumed_from_sweep": checkpoint.resumed_at,
            "sweeps_per_second": number(swept / seconds) if seconds > 0 else None})

    @dg.op(name=f"{name}_combine_chains", out=dg.Out(dg.Nothing))
    def combine_chains(context: dg.OpExecutionContext, confidential: ConfidentialStore, chains: list[int]):
        """Combine the chains' draws into the model (``model-copula.npz``), remove their
        checkpoints; R-hat and ESS are the asset's metadata."""
        wave = context.partition_key
        model = confidential.load_model(name, wave, "model-marginals.npz")
        confidential.discard(name, wave, *AFTER_POSTERIOR)
        with withheld_details("combining the chains"):
            model.set_chains([confidential.load_arrays(name, wave, f"chain-{c}.npz") for c in sorted(chains)])
            confidential.save_model(model, name, wave, "model-copula.npz")
            confidential.discard(name, wave, CHECKPOINTS)
        conv = model.convergence_
        swept = conv.get("sweeps_per_chain", [model.settings.sweeps])
        return dg.Output(None, metadata={
            "chains": conv["chains"], "draws_per_chain": conv["draws_per_chain"],
            "sweeps": max(swept), "sweeps_per_chain": ", ".join(map(str, swept)),
            "correlations_checked": conv["entries"],
            "rhat_max": number(conv["rhat_max"]), "rhat_median": number(conv["rhat_median"]),
            "share_rhat_below_1_01": number(conv["share_rhat_below_1_01"]),
            "ess_bulk_min": number(conv["ess_bulk_min"]), "ess_bulk_median": number(conv["ess_bulk_median"]),
            "ess_tail_min": number(conv["ess_tail_min"])})

    @dg.graph_asset(key=s.key("copula_posterior"), kinds={"numpy"}, **s.common,
                    ins={"marginals": dg.AssetIn(upstream.key, dagster_type=dg.Nothing)},
                    description="Posterior draws of the copula: one MCMC chain per step (as many as the "
                                "wave's config asks for, run in parallel), combined, with R-hat and bulk "
                                "ESS of its correlations (confidential).")
    def copula_posterior(marginals):
        return combine_chains(list_chains(marginals).map(run_chain).collect())
    return copula_posterior
