"""WS rules: DSH durable working state (WORKING_STATE.json, the other .dsh/project files, runtime
files and captured projections).

WS1xx are file rules (``continuity check``), WS2xx history rules (``continuity verify``).
"""

from continuity_checks.core.findings import Severity
from continuity_checks.core.rules import rule

FAMILY = "working-state"
W = Severity.WARNING

# --- WORKING_STATE.json -----------------------------------------------------------------------

NOT_STATE = rule(
    "WS101",
    FAMILY,
    "WORKING_STATE is not an object with the schema_version 7 keys",
    """A schema_version 7 WORKING_STATE.json is one JSON object with eleven keys: schema_version,
    task_id, the eight semantic lists (known, constraints, decisions, evidence, failed_hypotheses,
    do_not_repeat, open_acceptance, next_action) and checkpoint_meta. Extra keys are tolerated,
    because DSH's migration keeps prior keys; a missing one means the file was not written by
    DSH's writer or was cut.""",
    hint="restore the file from the last good commit, or let DSH rewrite it",
)
BAD_SCHEMA_VERSION = rule(
    "WS102",
    FAMILY,
    "schema_version is not 7",
    """DSH's migration forces schema_version to 7 on every project open. Any other value is a file
    from another version or a hand edit, and the rest of the checks do not apply to it.""",
    hint="set schema_version to 7 only if the file really has the version 7 shape",
)
BAD_FIELD = rule(
    "WS103",
    FAMILY,
    "task_id or a semantic field has the wrong type",
    """task_id is a string or null; each of the eight semantic fields is an array of strings;
    checkpoint_meta is an object. DSH's own migration silently turns a non-array into [], so a
    wrong type here means content is about to be lost.""",
    hint="write the field as an array of strings ([] when empty)",
)
PADDED_ITEM = rule(
    "WS104",
    FAMILY,
    "semantic item is empty or has surrounding whitespace",
    """DSH stores every item trimmed (JavaScript trim(), which also strips U+FEFF and every
    Unicode space) and drops empty ones. An empty or padded item was not written by DSH; the next
    checkpoint rewrites it, changing the state_hash. The one exception is failed_hypotheses while a
    task is active (task_id set): the host copies it raw from the task.""",
    hint="trim the item, or remove it if it is empty",
)
DUPLICATE_ITEM = rule(
    "WS105",
    FAMILY,
    "semantic item appears twice in its field",
    """DSH deduplicates every semantic list, keeping the first occurrence. A duplicate was not
    written by DSH (except failed_hypotheses while a task is active, copied raw from the task).""",
    hint="remove the later copy",
)
BAD_META = rule(
    "WS106",
    FAMILY,
    "checkpoint_meta value has the wrong shape",
    """checkpoint_meta.mode is init, merge or replace; checkpoint_kind null,
    investigative-state or compaction-evacuation; checkpoint_id CP-<uuid>; prune_audit_id
    CA-<uuid>; updated_at and prune_audited_at ISO 8601 UTC times with milliseconds (what
    JavaScript's toISOString writes); the seq and revision boundaries integers >= 0 or null;
    state_hash 64 lowercase hex digits or null; covered_evidence_ids an array of strings.""",
    hint="restore checkpoint_meta as DSH wrote it; never edit it by hand",
)
KIND_KEYS = rule(
    "WS107",
    FAMILY,
    "checkpoint_kind disagrees with the prune audit keys",
    """An investigative-state checkpoint never grants prune authority: DSH rebuilds the metadata
    without prune_audit_id and prune_audited_at. A compaction-evacuation checkpoint is written
    only by /compress after a coverage audit, with both keys (prune_audited_at equal to
    updated_at), an integer prune_safe_through_seq >= 0, mode "merge" and no covered evidence
    ids. Audit keys on an investigative checkpoint claim an authority
    the host never granted (invariants 1 and 7).""",
    hint="restore the metadata DSH wrote; prune authority comes only from /compress",
)
INIT_NOT_EMPTY = rule(
    "WS108",
    FAMILY,
    "mode init with non-empty checkpoint metadata",
    """mode "init" is the empty state DSH creates; every other metadata value is then null or
    empty. A checkpoint id, a hash or a boundary beside mode init mixes two writers.""",
    hint="restore the metadata DSH wrote",
)
STATE_HASH = rule(
    "WS109",
    FAMILY,
    "state_hash does not match the content",
    """state_hash is the SHA-256 of JSON.stringify of {task_id, known, constraints, decisions,
    evidence, failed_hypotheses, do_not_repeat, open_acceptance, next_action} in that order,
    compact, UTF-8. A mismatch means the content was edited after the checkpoint (DSH then refuses
    /compress with a stale checkpoint) or the hash was.""",
    hint="undo the hand edit, or record it through a DSH checkpoint; "
    "`continuity state hash FILE` prints the hash of the current content",
)
BOUNDARY_AHEAD = rule(
    "WS110",
    FAMILY,
    "prune boundary is ahead of the protocol boundary or the session revision",
    """prune_safe_through_seq may only cover what an audit saw, so it normally stays at or below
    protocol_committed_through_seq and session_revision. Seqs are per DSH session while the state
    is per project: a boundary set in one chat carries into another, where it can exceed what that
    session's audit covered (spec §1.2 hazard). A warning, because DSH itself allows it.""",
    severity=W,
    hint="check that the prune boundary belongs to this session before compacting again",
)
NEAR_COMPRESS_BUDGET = rule(
    "WS111",
    FAMILY,
    "WORKING_STATE is close to the /compress input budget",
    """/compress prepends the 2-space JSON of the canonical project state and of WORKING_STATE
    to its prompt and refuses (COMPACTION_SURVIVING_STATE_EXCEEDS_ROLE_INPUT_BUDGET) once they
    leave less than 8,000 characters of the CONTEXT_COMPACTOR's max_input_chars (96,000 by
    default) after 8,000 more for instructions: about 80,000 characters for both states. Past
    that, context can no longer be reclaimed.""",
    severity=W,
    hint="consolidate known/evidence items before the state outgrows /compress",
)
NOT_WRITER_FORMAT = rule(
    "WS112",
    FAMILY,
    "file is not formatted as DSH writes it",
    """DSH writes every .dsh/project JSON file as JSON.stringify(value, null, 2) plus a newline,
    UTF-8, non-ASCII raw. A file in another format was edited by hand or by another tool; the next
    DSH write rewrites it whole, which makes review diffs noisy.""",
    severity=W,
    hint="let DSH write the file, or format it with 2-space indentation and a final newline",
)
RUNTIME_COMMITTED = rule(
    "WS113",
    FAMILY,
    "DSH runtime file or transaction journal in the repository",
    """.dsh/runtime/ (the project lock, worktrees, triage staging) and transactions/tx-* journals
    are per-machine runtime state; DSH adds .dsh/runtime/ to .git/info/exclude. A committed
    journal makes every DSH read on a fresh clone fail with
    PROJECT_TRANSACTION_RECOVERY_REQUIRED, and a committed lock owner blocks other hosts.""",
    hint="remove it from the index (git rm --cached) and add .dsh/runtime/ to .gitignore",
)
PROJECT_FILE = rule(
    "WS114",
    FAMILY,
    ".dsh/project file does not match its schema",
    """state.json, EXECUTION_POLICY.json, ACTIVE_REQUIREMENTS.json, SOURCE_INDEX.json and
    RUNTIME_POLICY.json have the shapes DSH's bootstrap writes (schemas dsh-*.schema.json).
    RUNTIME_POLICY.json is strict: DSH rejects any unknown key with RUNTIME_POLICY_UNKNOWN_FIELD
    and a non-positive limit, so a bad policy stops every DSH run in the project.""",
    hint="compare with `continuity schema show` for the file's schema",
)
POLICY_CONSTRAINT = rule(
    "WS115",
    FAMILY,
    "RUNTIME_POLICY context_pressure is inconsistent",
    """DSH refuses a runtime policy whose hard_headroom_tokens is not below soft_headroom_tokens,
    or whose completion, compression-recovery and safety reserves add up to the context_window
    or more (after applying the defaults for absent values).""",
    hint="lower hard_headroom_tokens or the reserves",
)
CRITICAL_DIFFERS = rule(
    "WS116",
    FAMILY,
    "projection's critical field differs from the canonical state",
    """A bounded projection may drop old decisions, evidence and known items, but it copies
    task_id, constraints, failed_hypotheses, do_not_repeat, open_acceptance and next_action
    complete (invariant 4). A committed projection or injection capture whose critical fields
    differ from the canonical WORKING_STATE beside it is stale or edited.""",
    hint="re-render it with `continuity state project`, or commit the matching canonical state",
)
PROJECTION_SHAPE = rule(
    "WS117",
    FAMILY,
    "projection and canonical state are confused",
    """The projection is not the canonical state (invariant 6): a projection has
    projection_meta and no schema_version or checkpoint_meta; WORKING_STATE.json has no
    projection_meta. An injection capture must hold a projection after its header line.""",
    hint="keep the canonical state in WORKING_STATE.json and projections in their own files",
)
NO_CANONICAL = rule(
    "WS118",
    FAMILY,
    "projection's canonical state is not in the repository",
    """A projection names its canonical state in projection_meta.full_state_path. When that file
    is not there, the projection's critical fields cannot be compared, so this says so instead of
    passing silently.""",
    severity=W,
    hint="commit the canonical state the projection was rendered from, or exclude the capture",
)

STATE_LINKED = rule(
    "WS119",
    FAMILY,
    "WORKING_STATE.json or a .dsh/project file is a symlink",
    """DSH reads and writes its state files at their own paths. One that is a symlink (or is
    reached through a symlinked directory) holds the bytes of the file it leads to: checked
    here, it passes as that file, and a later edit of that file changes no state path, so the
    history rules (WS201-WS204, WS206) never see it. Its content is judged where it lives, if
    anywhere; this is the one finding for the path.""",
    hint="replace the symlink with the file itself (copy the content in, then commit the file)",
)

LONE_SURROGATE = rule(
    "WS120",
    FAMILY,
    "string holds half of a character (an unpaired UTF-16 surrogate)",
    """DSH's host is JavaScript, whose strings are UTF-16: a string cut in the middle of a
    character above U+FFFF (an emoji) keeps one surrogate, and JSON.stringify writes it as a
    \\udXXX escape. DSH reads such a file and hashes the escape as written (state_hash agrees),
    so it is no error; but the character is lost, and readers that need Unicode text (Python's
    UTF-8 encoder, a schema engine, an editor) refuse the string or show U+FFFD in its place.""",
    severity=W,
    hint="write the item again with the whole character through DSH, or leave it as DSH reads it",
)

# --- history ------------------------------------------------------------------------------------

BOUNDARY_DECREASED = rule(
    "WS201",
    FAMILY,
    "prune_safe_through_seq decreased",
    """/compress sets prune_safe_through_seq to max(previous, audited end): it never goes back.
    A lower (or removed) boundary in a later commit rewrites what earlier audits proved, and can
    let reclaimed context be reclaimed again on a different basis.""",
    hint="restore the previous boundary; it only ever grows",
)
BOUNDARY_WITHOUT_AUDIT = rule(
    "WS202",
    FAMILY,
    "prune boundary changed without a compaction audit",
    """prune_safe_through_seq changes only in the /compress authorization step, which writes
    checkpoint_kind compaction-evacuation and a new prune_audit_id. A boundary that moves in any
    other version was not granted by the host (invariants 1 and 7).""",
    hint="advance the boundary only through /compress",
)
SCHEMA_VERSION_DECREASED = rule(
    "WS203",
    FAMILY,
    "schema_version decreased",
    """DSH migrates WORKING_STATE forward on every open; an older schema_version in a later
    commit means an old copy was committed over the current state.""",
    hint="restore the current state instead of the old copy",
)
SAME_CHECKPOINT = rule(
    "WS204",
    FAMILY,
    "content changed under the same checkpoint_id",
    """Every DSH write of new content is a checkpoint with a new CP-<uuid>. Content whose
    state_hash changed while checkpoint_id stayed the same was edited outside DSH, and /compress
    will treat the old checkpoint as proof for content it never covered.""",
    hint="record the change through a DSH checkpoint instead of editing the file",
)
RUNTIME_ADDED = rule(
    "WS205",
    FAMILY,
    "commit adds or changes a DSH runtime file",
    """.dsh/runtime/ and transactions/tx-* journals are never committed (see WS113); this is the
    same rule applied to each commit of the range.""",
    hint="remove it from the commit and add .dsh/runtime/ to .gitignore",
)
SYMLINK = rule(
    "WS206",
    FAMILY,
    "DSH state file or directory committed as a symlink",
    """WORKING_STATE.json, the other .dsh/project files, captured projections and the
    directories .dsh, .dsh/project and .dsh/runtime are committed as what they are, never as
    symlinks (git mode 120000). Committed as one, a state file's content lives in the file the
    link names, whose later edits change no state path, so WS201-WS204 never see them; a
    symlinked .dsh/runtime brings runtime state and transaction journals in where WS205 cannot
    see them. A version that is a symlink is not compared by the other history rules: this is
    the one finding for it. Runtime files are WS205's, whatever they are.""",
    hint="commit the file or directory itself in place of the link",
)
