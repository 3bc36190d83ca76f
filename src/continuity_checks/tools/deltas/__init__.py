"""``continuity delta``: DeltaLayer Conversation Deltas written and read (docs/delta-helper.md).

The Python API is :class:`DeltaStore` (every command as a method) and :class:`DeltaError` (the
one-line refusal it raises).
"""

from continuity_checks.tools.deltas.reader import DeltaError
from continuity_checks.tools.deltas.store import DeltaStore

__all__ = ["DeltaError", "DeltaStore"]
