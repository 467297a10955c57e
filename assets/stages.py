"""What every asset of a survey shares: its stages' keys and partitions, the wave's stored
configuration, the files each stage discards before it starts, and the chain steps' threads
and progress lines."""

import contextlib
import os
import time
from dataclasses import dataclass

import dagster as dg

from mixsynth import infer_spec
from mixsynth.config import RunConfig
from mixsynth.survey import Survey
from resources import ConfidentialStore

from .metadata import number

FINGERPRINT_TAG = "mixsynth/fingerprint"
# What each stage's output is the basis of in the confidential store: discarded when the stage
# starts, so a failed or killed step never leaves a file from the previous input behind it.
CANDIDATE = ("candidate",)
AFTER_RESPONSES = CANDIDATE
AFTER_POSTERIOR = ("model.npz", ".model.npz.*.tmp", *AFTER_RESPONSES)     # the file and its temporaries
AFTER_CHAINS = ("model-copula.npz", ".model-copula.npz.*.tmp", *AFTER_POSTERIOR)
CHECKPOINTS = "checkpoints"   # the chains' states (Z included), kept until the posterior is complete
AFTER_MARGINALS = ("chain-*.npz", ".chain-*.tmp", CHECKPOINTS, *AFTER_CHAINS)   # draws and their temporaries
AFTER_RAW = ("model-marginals.npz", ".model-marginals.npz.*.tmp", *AFTER_MARGINALS)


@contextlib.contextmanager
def chain_threads(chains: int):
    """Give a chain step its share of the machine's cores for the sampler's numba threads, as
    ``mixsynth.sampler.run_chains`` gives each chain process (``MIXSYNTH_CHAIN_THREADS``
    overrides it, e.g. on executors that run each step on its own machine); yields the
    count and restores the previous one."""
    import numba
    before = numba.get_num_threads()
    threads = int(os.environ.get("MIXSYNTH_CHAIN_THREADS") or max(1, (os.cpu_count() or 1) // chains))
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(before)


def waves_partitions(survey: Survey) -> dg.DynamicPartitionsDefinition:
    """The survey's waves: one dynamic partition per landed wave file."""
    return dg.DynamicPartitionsDefinition(name=f"{survey.name}_waves")


@dataclass(frozen=True)
class WaveConfig:
    """The run configuration one wave runs with: built from the spec once, by ``raw_table``,
    and kept in the wave's confidential folder (``config.json``). ``marginal_estimates``
    builds the model with it and the model file carries it to every later stage, so a spec
    edited while a wave runs cannot mix two configurations in one wave."""

    FILE = "config.json"

    @staticmethod
    def write(config: RunConfig, confidential: ConfidentialStore, survey: str, wave: str) -> None:
        confidential.write_json(config.to_dict(), survey, wave, WaveConfig.FILE)

    @staticmethod
    def read(confidential: ConfidentialStore, survey: str, wave: str) -> RunConfig:
        return RunConfig.from_dict(confidential.read_json(survey, wave, WaveConfig.FILE))


@dataclass(frozen=True)
class SurveyStages:
    """What every stage factory of one survey shares: its name, wave partitions and chains."""

    survey: Survey
    partitions: dg.DynamicPartitionsDefinition
    chains: int

    @property
    def name(self) -> str:
        return self.survey.name

    def key(self, stage: str) -> dg.AssetKey:
        return dg.AssetKey([self.name, stage])

    @property
    def common(self) -> dict:
        return {"partitions_def": self.partitions, "group_name": self.name}

    def spec_of(self, train):
        return infer_spec(train, self.survey.spec)


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
