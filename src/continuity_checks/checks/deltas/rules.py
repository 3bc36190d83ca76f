"""DL rules: DeltaLayer Conversation Deltas, legacy history and the files beside them.

DL1xx are file rules (``continuity check``), DL2xx history rules (``continuity verify``).
"""

from continuity_checks.core.findings import Severity
from continuity_checks.core.rules import rule

FAMILY = "deltas"
W = Severity.WARNING

# --- records (a Conversation Delta file, or one line of legacy changes.jsonl) -----------------

NOT_OBJECT = rule(
    "DL101",
    FAMILY,
    "record is not a JSON object",
    """A Conversation Delta file holds one JSON object; each line of the legacy changes.jsonl holds
    one JSON object. DeltaLayer skips anything else with a warning, so the record is lost to every
    reader.""",
    hint="write the record as a JSON object",
)
MISSING_KEY = rule(
    "DL102",
    FAMILY,
    "record lacks a required key",
    """A Conversation Delta requires started_at, updated_at, source and changes; a legacy record
    requires time, source and changes. DeltaLayer skips a record without them.""",
    hint="add the missing key",
)
BAD_TIMESTAMP = rule(
    "DL103",
    FAMILY,
    "timestamp is not a DeltaLayer date or timestamp",
    """started_at, updated_at and legacy time must be a date (YYYY-MM-DD, kept as a date) or an ISO
    8601 datetime with a timezone offset (Z, +08:00, +0800). A datetime without an offset, an
    impossible date such as 2026-02-30, or anything else makes DeltaLayer skip the record. The
    grammar is the one the prototype accepts on Python 3.11, the same on every interpreter.""",
    hint="write an offset-aware ISO 8601 time such as 2026-09-21T16:20:00+08:00",
)
BAD_SOURCE = rule(
    "DL104",
    FAMILY,
    "source is not a non-empty string",
    """source names who wrote the record (an agent, a human). It must be a string with at least one
    non-whitespace character.""",
    hint='set source to the writer\'s name, e.g. "codex"',
)
BAD_CHANGES = rule(
    "DL105",
    FAMILY,
    "changes is not an array of strings",
    """changes is the list of durable semantic changes, each a string. An empty list is valid and
    means the conversation produced no durable change.""",
    hint="write changes as a JSON array of strings, [] when there are none",
)
BAD_CONVERSATION_ID = rule(
    "DL106",
    FAMILY,
    "conversation_id is not a string",
    """conversation_id is optional; when present it is a string or null.""",
    hint="make conversation_id a string, null, or leave it out",
)
EMPTY_CHANGE = rule(
    "DL107",
    FAMILY,
    "change item is empty or whitespace",
    """A change item that is empty or only whitespace records nothing and counts as a change:
    readers then treat the conversation as non-empty. An empty changes array is the way to record
    "no durable change".""",
    hint="remove the empty item; use [] when there are no changes",
)
FORBIDDEN_KEY = rule(
    "DL108",
    FAMILY,
    "delta carries lifecycle or reducer metadata",
    """DeltaLayer v0.2.1 keeps no lifecycle status or reducer metadata in a delta: no status,
    reason, superseded_by, priority, impact, type, before, after, sequence ids or clocks. Owned and
    historical are facts outside the file. DeltaLayer keeps such keys but they mean nothing to it,
    and agents start to trust them.""",
    severity=W,
    hint="remove the key; say what changed and why inside the change sentence",
)
UPDATED_BEFORE_STARTED = rule(
    "DL109",
    FAMILY,
    "updated_at is earlier than started_at",
    """updated_at is the time of the last maintenance of the delta and cannot precede the start of
    the conversation. Usually a clock or time zone mistake.""",
    severity=W,
    hint="set updated_at to the real time of the last update",
)
NAME_MISMATCH = rule(
    "DL110",
    FAMILY,
    "file name does not match started_at and source",
    """A delta is named <started_at slug>--<source slug>[--N].json (or .frozen.json): the
    normalised started_at with ':' as '-' and '+' as 'p', the source with unsafe characters as '-',
    and an optional collision suffix 1-9999. A name that does not match its content means the file
    was renamed, copied or its started_at/source edited.""",
    hint="use `continuity delta start` to create deltas; never edit started_at or source",
)
FROZEN_TWIN = rule(
    "DL111",
    FAMILY,
    "both X.json and X.frozen.json exist",
    """freeze renames X.json to X.frozen.json. Both at once means a frozen delta was copied back,
    a conversation kept writing after the freeze, or a freeze was interrupted (`continuity delta
    freeze` links before it unlinks; running it again finishes the freeze). Readers that do not
    know this list both as separate deltas.""",
    hint="run `continuity delta freeze` on X.json again, or remove X.json after checking that "
    "no change in it is lost",
)
STRAY_TEMP = rule(
    "DL112",
    FAMILY,
    "stray temporary file in .deltalayer/changes",
    """A .tmp file in .deltalayer/changes is left over from an interrupted atomic write. Its content
    never became the delta; committing it publishes a half-written record.""",
    hint="delete the .tmp file (check the delta it belonged to is complete)",
)
NESTED = rule(
    "DL114",
    FAMILY,
    "delta in a subdirectory of .deltalayer/changes",
    """DeltaLayer reads the deltas directly in .deltalayer/changes/ and never enters a
    subdirectory: a record one directory too deep is lost to every reader (`recent`, `older`,
    `rebuild-context`), though it looks committed.""",
    hint="move the file up into .deltalayer/changes/ (`git mv`), or delete it if it is a copy",
)
NOT_COMPACT = rule(
    "DL113",
    FAMILY,
    "delta is not one line of compact JSON",
    """DeltaLayer writes each delta as one line of compact JSON (no spaces, non-ASCII as UTF-8)
    and a newline. A hand-formatted file is still read, but the next update rewrites it whole, which
    makes review diffs noisy.""",
    severity=W,
    hint="write deltas with `continuity delta update` instead of by hand",
)
TORN_LINE = rule(
    "DL121",
    FAMILY,
    "legacy history ends with a torn line",
    """The last line of changes.jsonl has no newline and is not a complete record: a write was
    interrupted. DeltaLayer skips it.""",
    hint="legacy history is read-only: restore the file from git rather than repairing it by hand",
)
NO_FINAL_NEWLINE = rule(
    "DL122",
    FAMILY,
    "legacy history does not end with a newline",
    """The last record of changes.jsonl is complete but not terminated by a newline; anything
    appended later would be glued onto it.""",
    severity=W,
    hint="legacy history is read-only; leave it unless you restore it from git",
)
NO_MARKER = rule(
    "DL130",
    FAMILY,
    "AGENTS.md has no DeltaLayer continuity section",
    """A project with .deltalayer/ tells its agents how to read and write continuity in AGENTS.md,
    marked with <!-- deltalayer-conversation-v0.2.1 --> (or an older DeltaLayer marker). Without
    it, agents do not know to start a delta.""",
    severity=W,
    hint="run `continuity delta init` to add the section",
)
NO_PROJECT = rule(
    "DL131",
    FAMILY,
    "PROJECT.md is missing",
    """DeltaLayer reads PROJECT.md, the rebuildable current view of the project, before any
    delta.""",
    severity=W,
    hint="run `continuity delta init`, then describe the project in PROJECT.md",
)
DOUBLE_SECTION = rule(
    "DL132",
    FAMILY,
    "AGENTS.md carries more than one continuity section",
    """The DeltaLayer prototype's init does not recognise the v0.2.1 marker and appends a second,
    stale section. Two sections give agents two sets of rules.""",
    severity=W,
    hint="keep the newest section and delete the others",
)

# --- history ------------------------------------------------------------------------------------

FOREIGN_DELTA = rule(
    "DL201",
    FAMILY,
    "commit changes a delta its trailer does not name",
    """A commit whose message carries `Continuity-Delta: <path>` may create or modify that delta
    only. Changing another conversation's delta is a takeover.""",
    hint="commit each conversation's delta on its own, each commit naming that one delta",
)
SEVERAL_DELTAS = rule(
    "DL202",
    FAMILY,
    "commit without trailer modifies more than one existing delta",
    """A conversation owns exactly one delta. A commit without a Continuity-Delta trailer may
    modify at most one delta that existed before it; touching several means one conversation
    updated another's.""",
    hint="commit each conversation's delta separately, with a `Continuity-Delta: <path>` trailer",
)
TRAILER_REQUIRED = rule(
    "DL203",
    FAMILY,
    "commit changes a delta without a Continuity-Delta trailer",
    """The configuration (deltas.ownership = "trailer") requires every commit that creates or
    modifies a delta to name it in a `Continuity-Delta: <path>` trailer.""",
    hint="add `Continuity-Delta: .deltalayer/changes/<file>` as the last paragraph of the message",
)
TAKEOVER = rule(
    "DL204",
    FAMILY,
    "started_at, source or conversation_id changed",
    """These fields identify the conversation that owns a delta and never change once committed.
    A change is a takeover of another conversation's delta, or a rewrite of history.""",
    hint="restore the original value; a new conversation starts its own delta",
)
UPDATED_WENT_BACK = rule(
    "DL205",
    FAMILY,
    "updated_at went back",
    """updated_at records the last maintenance and only moves forward.""",
    hint="set updated_at to the real time of this update",
)
DELTA_DELETED = rule(
    "DL206",
    FAMILY,
    "delta deleted",
    """Every conversation leaves a delta, and deltas are history: they are not deleted (unless
    deltas.allow-delete = true). Freezing is no deletion: X.json removed as X.frozen.json
    appears, or removed beside an X.frozen.json holding its very bytes (the twin of DL111).""",
    hint="restore the delta from the parent commit",
)
FROZEN_CHANGED = rule(
    "DL207",
    FAMILY,
    "frozen delta changed or deleted",
    """A .frozen.json delta never changes and is never deleted.""",
    hint="restore the frozen file from the parent commit",
)
BAD_FREEZE = rule(
    "DL208",
    FAMILY,
    "frozen delta appeared with bytes other than its X.json",
    """A .frozen.json appears either as a new file or by renaming X.json: with identical bytes, or
    with those of an update of X.json made before the freeze and committed with it (DeltaLayer's
    handoff order: update, freeze, commit), which is judged as that update (DL204, DL205). Bytes
    that cannot be compared with X.json as an update (either side is not a delta) would hide
    their change in the rename.""",
    hint="freeze with `continuity delta freeze` a delta that parses, and commit a repair of its "
    "content separately",
)
LEGACY_REWRITTEN = rule(
    "DL209",
    FAMILY,
    "legacy history rewritten",
    """.deltalayer/changes.jsonl is read-only history (deltas.legacy = "read-only", the default:
    a file added with its v0 records is kept as it is, and the empty file init leaves stays
    empty) or may only grow at its end (deltas.legacy = "append-only": the old bytes are a prefix
    of the new). Editing, reordering or deleting records rewrites history; a record written into
    the file under v0.2 is read after every delta, as older than all of them.""",
    hint="restore the file from the parent commit; new history goes into Conversation Deltas",
)
SEVERAL_CONVERSATIONS = rule(
    "DL210",
    FAMILY,
    "commit names the deltas of several conversations",
    """A conversation owns one delta, and a Continuity-Delta trailer says which conversation a
    commit speaks for. Trailers that name two or more deltas (other than one delta and its frozen
    form) let one commit speak for several conversations at once, which is how a takeover would
    hide behind a trailer. Each conversation's changes go in commits of their own.""",
    hint="commit each conversation's delta on its own, each commit naming that one delta",
)
OTHER_IDENTITY = rule(
    "DL211",
    FAMILY,
    "a delta changed by another identity than the one that created it",
    """The identity that created a delta owns it: by default the author email of the commit that
    added it (deltas.owner-identity = "committer-email" takes the committer's instead), as git
    recorded it, compared without regard to case; .mailmap is not read, since the commits under
    judgement could change it. A later commit by another identity that modifies or freezes the
    delta (or deletes it, where allow-delete = true) is this finding, whatever its trailers say:
    a trailer is the commit's own claim, the creator is a fact of history. Identities listed in
    deltas.owner-allowed (a CI bot, a maintainer who freezes deltas) may change any delta. A
    merge answers only for what it changed itself: a version it brings in from another parent is
    judged at the commit that made it. A delta created before the range is looked up in the
    history before the range, once for all such deltas.""",
    hint=(
        "leave the delta to the conversation (identity) that created it and start a delta of "
        "your own (continuity delta start), or list your identity in "
        "[tool.continuity.deltas] owner-allowed if it may change any delta"
    ),
)
SYMLINK = rule(
    "DL212",
    FAMILY,
    "delta, legacy history or store directory committed as a symlink",
    """A Conversation Delta, the legacy changes.jsonl and the store's directories (.deltalayer,
    .deltalayer/changes) are regular files and directories. Committed as a symlink, their
    content lives where the link leads: readers (and continuity check) follow the link, but a
    commit that edits what it leads to changes no delta path, so DL204-DL209 never see the
    change: a frozen delta could be rewritten, a delta's started_at or source changed, legacy
    history edited, each commit passing. continuity delta refuses to write through a symlinked
    store directory, and skips a delta that leads outside .deltalayer/changes.""",
    hint="commit the file or directory itself in place of the link",
)
