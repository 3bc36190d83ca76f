"""The helper commands that write continuity files, one package per family (``delta``,
``capture``, ``provenance add``, ``state``).

A tool reads through :mod:`continuity_checks.core.confined_files` and writes through
:mod:`continuity_checks.core.atomic`; it imports a family's read-only code from ``checks/`` and
the engine only through its public functions. Nothing under ``checks/`` imports a tool.
"""
