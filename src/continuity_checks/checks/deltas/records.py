"""The DeltaLayer record validators (specs/deltalayer.md §2, §2.2), with upstream's messages.

Both validators stop at the first problem, as upstream does, and raise :class:`RecordError`
whose ``str()`` is upstream's text. They check exactly what the prototype checks: extra keys,
empty change strings and ``updated_at < started_at`` are accepted here (the file checks report
them separately).
"""

from continuity_checks.checks.deltas import timestamps
from continuity_checks.checks.deltas.timestamps import Timestamp, TimestampError

NOT_OBJECT = "conversation delta must be a JSON object"
MISSING_TIMES = "conversation delta requires started_at and updated_at"
BAD_SOURCE = "source must be a non-empty string"
BAD_CHANGES = "changes must be an array of strings"
BAD_CONVERSATION_ID = "conversation_id must be a string"
LEGACY_NOT_OBJECT = "legacy event must be a JSON object"
LEGACY_MISSING_TIME = "legacy event.time is required"
LEGACY_BAD_CONVERSATION_ID = "legacy conversation_id must be a string"


class RecordError(ValueError):
    """A record that upstream's validator rejects; ``str()`` is upstream's message."""


class DeltaTimes:
    """The parsed times of a valid Conversation Delta."""

    __slots__ = ("started", "updated")

    def __init__(self, started: Timestamp, updated: Timestamp) -> None:
        self.started = started
        self.updated = updated


def parse_time(value: object) -> Timestamp:
    """:func:`timestamps.parse`, raising :class:`RecordError` with the same message."""
    try:
        return timestamps.parse(value)
    except TimestampError as exc:
        raise RecordError(str(exc)) from None


def check_source(value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise RecordError(BAD_SOURCE)


def check_changes(value: object) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RecordError(BAD_CHANGES)


def validate_delta(value: object) -> DeltaTimes:
    """Validate a Conversation Delta object; return its parsed times."""
    if not isinstance(value, dict):
        raise RecordError(NOT_OBJECT)
    if "started_at" not in value or "updated_at" not in value:
        raise RecordError(MISSING_TIMES)
    times = DeltaTimes(parse_time(value["started_at"]), parse_time(value["updated_at"]))
    check_source(value.get("source"))
    check_changes(value.get("changes"))
    conversation_id = value.get("conversation_id")
    if conversation_id is not None and not isinstance(conversation_id, str):
        raise RecordError(BAD_CONVERSATION_ID)
    return times


def validate_legacy(value: object) -> Timestamp:
    """Validate one legacy ``changes.jsonl`` event; return its parsed ``time``."""
    if not isinstance(value, dict):
        raise RecordError(LEGACY_NOT_OBJECT)
    if "time" not in value:
        raise RecordError(LEGACY_MISSING_TIME)
    time = parse_time(value["time"])
    check_source(value.get("source"))
    check_changes(value.get("changes"))
    conversation_id = value.get("conversation_id")
    if conversation_id is not None and not isinstance(conversation_id, str):
        raise RecordError(LEGACY_BAD_CONVERSATION_ID)
    return time
