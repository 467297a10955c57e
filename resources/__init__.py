"""Dagster resources: where confidential files, released files and landing files live."""
from .stores import ConfidentialStore, LandingArea, ReleaseStore, project_folder

__all__ = ["ConfidentialStore", "LandingArea", "ReleaseStore", "project_folder"]
