"""Dagster assets: one per stage of a survey wave, thin wrappers around the core."""
from .stages import waves_partitions
from .survey import survey_assets

__all__ = ["survey_assets", "waves_partitions"]
