"""What the working-state family is built with, apart from its checks.

The family module imports this and not ``files``: the commit hook builds every family to route
the staged paths, and a commit that touches no DSH file should not pay for importing the
checks (``files`` pulls in the schemas, the state hash and the projection).
"""

from __future__ import annotations

from dataclasses import dataclass

#: /compress refuses once both states' 2-space JSON exceed max_input_chars (96,000) - 16,000;
#: warn at three quarters of that, while there is still room to consolidate
DEFAULT_COMPRESS_WARN_CHARS = 60000

#: kinds of claimed paths that must never be committed: reported once per directory or journal
RUNTIME_KINDS = ("runtime", "transaction")


@dataclass(frozen=True)
class Settings:
    max_depth: int
    compress_warn_chars: int
