"""What every asset of a survey shares: its stages' keys and partitions, the wave's stored
configuration and the files each stage discards before it starts."""

from dataclasses import dataclass

import dagster as dg

from mixsynth import infer_spec
from mixsynth.config import RunConfig
from mixsynth.survey import Survey
from resources import ConfidentialStore

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
    """What every stage factory of one survey shares: its name and wave partitions."""

    survey: Survey
    partitions: dg.DynamicPartitionsDefinition

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
