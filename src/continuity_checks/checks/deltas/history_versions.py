"""The versions of deltas the history rules compare, parsed once each in a run
(:class:`Versions`, by blob id), and what the file check of the state a commit leaves shares
with them: the parses of the bytes (:class:`Parsed`) and of the times (:class:`Times`)."""

from collections.abc import Callable

from continuity_checks.checks.deltas import timestamps
from continuity_checks.checks.deltas.timestamps import Timestamp, TimestampError
from continuity_checks.core import strict_json

#: a key a version does not hold (``value.get(key, MISSING)``)
MISSING = object()


class _Version:
    """What the content rules need of one version of a delta, computed once per blob."""

    __slots__ = ("identity", "text", "updated", "value")

    def __init__(
        self,
        text: str,
        value: dict[str, object],
        identity: tuple[object, ...],
        updated: tuple[int, float] | None,
    ) -> None:
        self.text = text
        self.value = value
        self.identity = identity  # equal identities: no identity field changed (see _identity)
        self.updated = updated  # updated_at's ordering key, None when absent or invalid


def _version(text: str, value: dict[str, object], times: "Times") -> _Version:
    get = value.get
    started, source, conversation = (
        get("started_at", MISSING),
        get("source", MISSING),
        get("conversation_id"),
    )
    updated = get("updated_at")
    return _Version(
        text,
        value,
        (started, source, type(source), conversation, type(conversation)),
        times.sort_key(updated) if isinstance(updated, str) else None,
    )


class Parsed:
    """The versions of deltas parsed last in one run (``strict_json.load``), by their bytes:
    the history rules and the file check of the state a commit leaves read the same versions,
    and each is parsed once. The same bytes always give the same answer, so an entry never goes
    stale; the ``KEPT`` newest versions of at most ``ITEM_LIMIT`` bytes are kept."""

    __slots__ = ("_kept", "max_depth")

    KEPT = 4  # a commit's old and new versions, and a freeze's two
    ITEM_LIMIT = 64 * 1024

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self._kept: dict[bytes, strict_json.Document | strict_json.Problem] = {}

    def load(self, data: bytes) -> strict_json.Document | strict_json.Problem:
        """``strict_json.load(data)`` with this run's ``max_depth``, asked for the compact proof
        the file check reads (``compact_proof``)."""
        kept = self._kept
        found = kept.get(data)
        if found is None:
            found = strict_json.load(data, max_depth=self.max_depth, compact_proof=True)
            if len(data) <= self.ITEM_LIMIT:
                if len(kept) >= self.KEPT:
                    del kept[next(iter(kept))]
                kept[data] = found
        return found


class Times:
    """The times parsed last in one run (``timestamps.parse``), by their text: a delta's
    ``started_at`` is the same in every version, and the history rules parse a version's
    ``updated_at`` before the file check of the state a commit leaves parses it again. The same
    text always gives the same time, so an entry never goes stale; the ``KEPT`` newest are kept
    (a text that does not parse is not kept: its error is raised again)."""

    __slots__ = ("_kept",)

    KEPT = 64

    def __init__(self) -> None:
        self._kept: dict[str, Timestamp] = {}

    def parse(self, raw: object) -> Timestamp:
        """``timestamps.parse(raw)``."""
        if type(raw) is not str:
            return timestamps.parse(raw)
        kept = self._kept
        found = kept.get(raw)
        if found is None:
            found = timestamps.parse(raw)
            if len(kept) >= self.KEPT:
                del kept[next(iter(kept))]
            kept[raw] = found
        return found

    def sort_key(self, value: str) -> tuple[int, float] | None:
        """DeltaLayer's ordering key of a time, or None when it does not parse."""
        try:
            return self.parse(value).sort_key()
        except TimestampError:
            return None


class Versions:
    """What the content rules need of each version of a delta, by blob id, for one run (the
    family owns it). The new version of one commit is the old version of the next one that
    touches the same delta, so most versions are parsed once; a blob id names its bytes, so an
    entry never goes stale. Bounded: the newest half is kept when it fills up. Versions are
    parsed through ``parsed``, shared with the file check."""

    KEPT = 256  # at least; up to twice as many
    ITEM_LIMIT = 64 * 1024  # larger versions are parsed again when needed, not kept

    def __init__(self, parsed: Parsed, times: Times | None = None) -> None:
        self.parsed = parsed
        self.times = Times() if times is None else times
        self._kept: dict[str, _Version | None] = {}

    def get(self, blob: str, read: Callable[[], bytes | None]) -> _Version | None:
        """The version with id ``blob`` (its bytes from ``read`` when not kept); None when it is
        too large to read or not a strict JSON object."""
        kept = self._kept
        if blob in kept:
            return kept[blob]
        data = read()
        if data is None:
            return None
        doc = self.parsed.load(data)
        version = None
        if isinstance(doc, strict_json.Document) and isinstance(doc.value, dict):
            version = _version(doc.text, doc.value, self.times)
        if len(data) <= self.ITEM_LIMIT:
            if len(kept) >= 2 * self.KEPT:
                newest = list(kept.items())[-self.KEPT :]
                kept.clear()
                kept.update(newest)
            kept[blob] = version
        return version
