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

from continuity_checks.engine.discovery import relative, walk
from continuity_checks.engine.file_mode import Progress, check
from continuity_checks.engine.history import verify
from continuity_checks.engine.staged import check_staged

__all__ = ["Progress", "check", "check_staged", "relative", "verify", "walk"]
