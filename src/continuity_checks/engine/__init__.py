"""The engine: file mode (:func:`check`, with the commit being made: :func:`check_staged`) and
history mode (:func:`verify`), each driving the families over a snapshot and filling a Report.

One module per concern: file mode's discovery (``discovery``: the work tree's walk, the stream of
claimed files), file mode and its one loop (``file_mode``), the commit being made (``staged``),
the walk of a range (``history``), the commit router both use (``router``), the state a commit
leaves (``commit_state``), last good versions (``last_good``), what file mode does not check
(``territory``), how to mend a commit (``mending``), configuration changes inside a range
(``config_changes``), the commit order of a report (``commit_order``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks.core.config import Config
from continuity_checks.core.findings import Report
from continuity_checks.engine.discovery import relative, walk
from continuity_checks.engine.file_mode import Progress, check
from continuity_checks.engine.staged import check_staged

if TYPE_CHECKING:
    from continuity_checks.core.baseline import BaselineSource
    from continuity_checks.core.shard import Shard

__all__ = ["Progress", "check", "check_staged", "relative", "verify", "walk"]


def verify(
    root: Path,
    config: Config,
    revision_range: str,
    *,
    only: tuple[str, ...] | None = None,
    config_at_base: bool = False,
    shard: Shard | None = None,
    baseline: BaselineSource | None = None,
    progress: Progress | None = None,
    pushed: bool = False,
) -> Report:
    """History mode: :func:`continuity_checks.engine.history.verify`, whose modules (the walk,
    the commit order, configuration changes) file mode and the commit hook never load."""
    from continuity_checks.engine import history

    return history.verify(
        root,
        config,
        revision_range,
        only=only,
        config_at_base=config_at_base,
        shard=shard,
        baseline=baseline,
        progress=progress,
        pushed=pushed,
    )
