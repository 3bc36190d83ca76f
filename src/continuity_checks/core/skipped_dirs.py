"""The directories no walk of a tree enters: other version control systems' stores, tool
environments and caches. File mode's discovery walk and a family's search of a tree both skip
them, so that what a family finds is what file mode would check."""

from __future__ import annotations

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".nox", ".tox", ".venv", "node_modules", "__pycache__"}
)
