"""Dagster assets: one per stage of a survey wave, thin wrappers around the core."""
from .survey import survey_assets, waves_partitions

__all__ = ["survey_assets", "waves_partitions"]
