"""Utility and disclosure-risk measures; aggregates only."""
