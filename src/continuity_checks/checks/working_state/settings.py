"""What the working-state family is built with, and the directory a runtime file is reported
in, apart from its checks.

The family module imports this and not ``files``: the commit hook builds every family to route
the staged paths, and a commit that touches no DSH file should not pay for importing the
checks (``files`` pulls in the schemas, the state hash and the projection).
"""

from continuity_checks.core.frozen import Frozen

#: /compress refuses once both states' 2-space JSON exceed max_input_chars (96,000) - 16,000;
#: warn at three quarters of that, while there is still room to consolidate
DEFAULT_COMPRESS_WARN_CHARS = 60000

#: kinds of claimed paths that must never be committed: reported once per directory or journal
RUNTIME_KINDS = ("runtime", "transaction")


def runtime_root(path: str) -> str:
    """The directory a runtime file belongs to, for reporting once: its ``tx-*`` journal, else
    its ``.dsh/runtime`` directory."""
    parts = path.split("/")
    for index in range(len(parts) - 1):
        if parts[index] == "transactions" and parts[index + 1].startswith("tx-"):
            return "/".join(parts[: index + 2])
    at = parts.index(".dsh")
    return "/".join(parts[: at + 2])


class Settings(Frozen):
    """What the family is built with (a frozen value)."""

    _fields = ("max_depth", "compress_warn_chars")
    __slots__ = _fields
    max_depth: int
    compress_warn_chars: int

    def __init__(self, max_depth: int, compress_warn_chars: int) -> None:
        self._set(max_depth, compress_warn_chars)
