"""Dagster assembly: the code location's Definitions, jobs, partitions, schedules and sensors."""
