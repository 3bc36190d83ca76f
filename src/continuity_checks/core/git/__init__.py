"""Git access for history mode (``continuity verify``), with plain git commands:

- :mod:`.repository`: the repository, the range, and the life of git's processes (three per
  run: one ``rev-parse``, one ``log``, one ``cat-file --batch``);
- :mod:`.log`: the ``git log`` arguments built from a :class:`LogRequest`, and its parser;
- :mod:`.objects`: objects by id or by ``<commit>:<path>``, and tree objects.

Each module is imported on first use of one of its names here: file mode imports
:class:`Commit` (through ``core.family``) and nothing else of git access, and
:mod:`.repository` needs :mod:`subprocess`, which file mode never loads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from continuity_checks.core.git.errors import (
        FETCH_HINT,
        GIT_HINT,
        RANGE_HINT,
        UNKNOWN_REF_HINT,
        GitError,
    )
    from continuity_checks.core.git.log import (
        FIELDS,
        GITLINK,
        NO_FILE,
        Commit,
        LogRequest,
        RawChange,
        log_arguments,
        parse_log,
    )
    from continuity_checks.core.git.objects import (
        TREE,
        GitObject,
        ObjectReader,
        TreeEntry,
        tree_entries,
    )
    from continuity_checks.core.git.repository import (
        Base,
        Repository,
        environment,
        parse_range,
    )

#: Where each public name lives.
_MODULES = {
    **dict.fromkeys(
        ("FETCH_HINT", "GIT_HINT", "RANGE_HINT", "UNKNOWN_REF_HINT", "GitError"), "errors"
    ),
    **dict.fromkeys(
        (
            "FIELDS",
            "GITLINK",
            "NO_FILE",
            "Commit",
            "LogRequest",
            "RawChange",
            "log_arguments",
            "parse_log",
        ),
        "log",
    ),
    **dict.fromkeys(("TREE", "GitObject", "ObjectReader", "TreeEntry", "tree_entries"), "objects"),
    **dict.fromkeys(("Base", "Repository", "environment", "parse_range"), "repository"),
}
__all__ = [  # the names of _MODULES (a test keeps the two equal)
    "FETCH_HINT",
    "FIELDS",
    "GITLINK",
    "GIT_HINT",
    "NO_FILE",
    "RANGE_HINT",
    "TREE",
    "UNKNOWN_REF_HINT",
    "Base",
    "Commit",
    "GitError",
    "GitObject",
    "LogRequest",
    "ObjectReader",
    "RawChange",
    "Repository",
    "TreeEntry",
    "environment",
    "log_arguments",
    "parse_log",
    "parse_range",
    "tree_entries",
]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next access is an ordinary one
    return value
