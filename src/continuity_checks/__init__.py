"""Pre-commit and CI checks for the continuity files AI agents keep in a repository."""

__version__ = "0.1.0"
