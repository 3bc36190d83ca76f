"""CX rules: LoopX context captures, reader references, decision directories and cycle deltas.

CX1xx are file rules (``continuity check``), CX2xx history rules (``continuity verify``).
The formats are in docs/formats.md (captures); what is confirmed in LoopX 2.1.1, what seed 001
states and what this project chose is in the spec they follow.
"""

from continuity_checks.core.findings import Severity
from continuity_checks.core.rules import rule

FAMILY = "captures"
W = Severity.WARNING

# --- manifest and capture ------------------------------------------------------------------

MANIFEST_SCHEMA = rule(
    "CX101",
    FAMILY,
    "manifest.json does not match its schema",
    """A capture manifest is a JSON object with schema_version 1, capture_file (the capture
    beside it: capture.json, or projection.json in a decision-<id>/ directory, the names whose
    rewrites the commit hook and verify see), capture_sha256 (64 lowercase hex digits, bare
    or after "sha256:") and capture_bytes (the capture's size), optionally created_at,
    goal_id, agent_id, turn_instance_id and files (other files of the directory it pins).
    Schema: loopx-capture-manifest.""",
    hint="rewrite the manifest with `continuity capture manifest DIR`",
)
PATH_ESCAPES = rule(
    "CX102",
    FAMILY,
    "a named path leaves its directory",
    """Every path a capture file names (capture_file, a pinned file, a reader's capture, a
    delivery's base or delta) is relative to the directory of the file that names it and stays
    inside it: an absolute path, a ".." component or a backslash is refused, and the file is
    never opened. The same for a name whose real location, once symlinks are followed, is
    outside the directory (a capture.json that links to a sibling directory or elsewhere in
    the root): it is never read or hashed, in file mode and in history mode (at the commit that
    brings the symlink in). A symlink leading out of the checked root is refused by the
    snapshot (CC001).""",
    hint="name the file by its relative name inside the same directory",
)
NAMED_MISSING = rule(
    "CX103",
    FAMILY,
    "a named file does not exist",
    """A manifest names its capture, a reader reference its capture, a delivery its projection,
    required context, base and delta. Each must exist beside the file that names it: a capture
    that is gone cannot be re-read, and LoopX treats a missing original capture as a hard error
    ("restore, do not rerun").""",
    hint="a file that was committed and deleted: restore it from the commit before its deletion "
    "(`git log -1 -- <path>` names the deletion); a file never committed: add it (stage it, if it "
    "is only in the work tree), or correct the name; a new observation belongs in a new "
    "directory",
)
CAPTURE_DIGEST = rule(
    "CX104",
    FAMILY,
    "a pinned digest does not match the file's bytes",
    """The manifest's capture_sha256 (and every digest in its files map) must be the SHA-256 of
    the file's current bytes: "source changed but digest unchanged" is rejected. The capture
    digest is over the raw bytes by default ([captures] capture-digest = "raw"); with
    capture-digest = "canonical" it is over the capture's canonical JSON (keys by code point, no
    spaces, as JavaScript writes it). Both digest shapes, bare and "sha256:", are understood.""",
    hint="a capture is never rewritten: restore its bytes, or write a new capture directory",
)
CAPTURE_SIZE = rule(
    "CX105",
    FAMILY,
    "capture_bytes does not match the capture's size",
    """The manifest's capture_bytes (and each pinned file's bytes) must be the file's size in
    bytes.""",
    hint="restore the capture; a new observation belongs in a new directory",
)

# --- reader references -----------------------------------------------------------------------

READER_SCHEMA = rule(
    "CX110",
    FAMILY,
    "*.reader.json does not match its schema",
    """A reader reference is a JSON object with schema_version 1, capture_file, capture_sha256,
    select (an ordered, non-empty list of RFC 6901 pointers) and selection_sha256, optionally
    list_depth, purpose, note and command. Schema: loopx-capture-reader.""",
    hint="write reader references with `continuity capture read` and keep them unedited",
)
READER_PIN = rule(
    "CX111",
    FAMILY,
    "a reader reference pins another capture digest",
    """A reader reference pins the digest of the capture it reads; when the capture's bytes no
    longer hash to that digest the reference is stale and LoopX refuses it, returning nothing of
    the capture.""",
    hint="restore the capture, or write a new reference against the new capture",
)
READER_POINTER = rule(
    "CX112",
    FAMILY,
    "a selected pointer does not resolve",
    """Every pointer of a reader reference (and every supporting_material_pointer) must be a valid
    RFC 6901 pointer that resolves in the capture: array indexes are decimals without leading
    zeros, "-" is not a readable position, and one pointer that misses rejects the whole batch (a
    value that is JSON null is present and resolves).""",
    hint="select pointers that exist in this capture version",
)
SELECTION_DIGEST = rule(
    "CX113",
    FAMILY,
    "selection_sha256 does not agree with the selection",
    """The selection digest identifies a read. By default ([captures] selection-digest = "H1") it
    is the SHA-256 of the canonical JSON of {"capture_sha256": <bare digest>, "select":
    [pointers]} (plus "list_depth" for a listing); with "H2" it is the SHA-256 of the canonical
    JSON of the returned [{"pointer", "value"}] list; with "shape" only its shape is checked.
    Across the reader references checked together, one capture and one selection always have one
    selection digest.""",
    hint="rewrite the reference with `continuity capture read ... --reference-out FILE`",
)
READER_COMMAND = rule(
    "CX114",
    FAMILY,
    "a reader reference's command disagrees with its fields",
    """When a reader reference carries the context-read command line, that command must read the
    same capture file with the same capture digest, the same pointers in the same order, the
    same list depth and (when it names one) the same selection digest.""",
    hint="regenerate the command from the reference's fields",
)
DUPLICATE_POINTER = rule(
    "CX115",
    FAMILY,
    "a pointer is selected twice",
    """LoopX merges several --select options into one read; a pointer given twice is kept as given
    (this project only flags it: it is lenient, LoopX may reject it). With [captures]
    duplicate-pointers = "reject" it is an error, and `continuity capture read` refuses it.""",
    severity=W,
    hint="select each pointer once",
)

# --- decision directories: delivery.json and cycle deltas -------------------------------------

DELIVERY_SCHEMA = rule(
    "CX120",
    FAMILY,
    "delivery.json does not match its schema",
    """A delivery is a JSON object with schema_version 1, mode ("full" or "delta"),
    projection_sha256 and required_context_sha256; a delta delivery also names its base and
    delta as {"file", "sha256"}: cycle-base.json and cycle-delta.json beside it, the files
    that have checks of their own. Schema: loopx-delivery.""",
    hint="fix the delivery record; see docs/formats.md (captures)",
)
DELIVERY_DIGEST = rule(
    "CX121",
    FAMILY,
    "a digest in delivery.json does not match its file",
    """Every digest of a delivery (projection.json, required-context.json, the base and the delta
    of a delta delivery) must be the SHA-256 of that file's bytes in the same directory.""",
    hint="a decision directory is one immutable observation: restore it or write a new one",
)
DELTA_RESTORE = rule(
    "CX122",
    FAMILY,
    "a cycle delta does not restore its target exactly",
    """Applying a cycle delta's operations to its base must give, in canonical JSON bytes, the
    current source: the bytes must hash to target_sha256, and in a decision directory with a
    delta delivery they must equal the canonical bytes of projection.json. Any mismatch means the
    delivery must fall back to full.""",
    hint="write the delta again with `continuity capture diff BASE CURRENT`, or deliver full",
)
FULL_WITH_BASE = rule(
    "CX123",
    FAMILY,
    "a full delivery depends on a base",
    """A full delivery carries the current source itself: it names no base and no delta.""",
    hint='remove base and delta, or make the delivery mode "delta"',
)
CYCLE_DELTA_SCHEMA = rule(
    "CX124",
    FAMILY,
    "cycle-delta.json does not match its schema",
    """A cycle delta is a JSON object with schema_version 1, base_sha256, target_sha256 and
    operations: add {path, value}, replace {path, value}, remove {path}, move {from, path},
    reorder {path, order}, ref {path, from}. Schema: loopx-cycle-delta. With [captures]
    delta-ops = "rfc6902" the operations are RFC 6902's (add, remove, replace, move, copy
    {from, path}, test {path, value}); schema loopx-cycle-delta-rfc6902.""",
    hint="write the delta with `continuity capture diff BASE CURRENT`",
)
BASE_DIGEST = rule(
    "CX125",
    FAMILY,
    "a cycle delta's base_sha256 does not match its base",
    """base_sha256 is the SHA-256 of the bytes of cycle-base.json beside the delta: a delta
    against another base cannot restore the current source.""",
    hint="diff against the saved baseline, or start a new cycle with a full delivery",
)
BAD_OPERATION = rule(
    "CX126",
    FAMILY,
    "a cycle-delta operation cannot apply",
    """Each operation applies in order to a copy of the base: its path (and a move's from) must
    resolve, an added member's parent must exist, a reorder must be a permutation of 0..n-1 of
    the array it names, a ref's from resolves in the base, and "-" is allowed only as the last
    token of an add (append).""",
    hint="write the delta again with `continuity capture diff BASE CURRENT`",
)

# --- exact sharing (context_ref) --------------------------------------------------------------

STUB_SHAPE = rule(
    "CX130",
    FAMILY,
    "a context_ref stub has other keys",
    """An exact-sharing stub replaces a whole record: it has exactly todo_id (a string) and
    context_ref (a pointer string), nothing else ([captures] context-ref = "relaxed" allows other
    keys).""",
    hint='write the stub as {"todo_id": ..., "context_ref": "/path/to/first/copy"}',
)
STUB_UNRESOLVED = rule(
    "CX131",
    FAMILY,
    "a context_ref does not resolve",
    """context_ref is an RFC 6901 pointer (no leading "#") into the same document; it must
    resolve to an object.""",
    hint="point at the first complete copy of the record in the same view",
)
STUB_FORWARD = rule(
    "CX132",
    FAMILY,
    "a context_ref points forward",
    """The target of a stub is the first complete occurrence of the record in document order: a
    stub points backwards, never at itself or at something after it.""",
    hint="keep the first occurrence inline and replace the later copies",
)
STUB_CHAIN = rule(
    "CX133",
    FAMILY,
    "a context_ref points at another stub",
    """Sharing has no chains: the target of a stub is a complete record, not itself a stub
    ([captures] context-ref = "relaxed" allows chains that end in a record).""",
    hint="point the stub at the complete record",
)
STUB_TODO_ID = rule(
    "CX134",
    FAMILY,
    "a context_ref target carries another todo_id",
    """Sharing is by full-record identity: the stub's todo_id equals the target record's todo_id.
    Records with the same title but other facts stay inline.""",
    hint="point the stub at a copy of the same record",
)

# --- requirement and acceptance records -------------------------------------------------------

REQUIREMENT_SCHEMA = rule(
    "CX140",
    FAMILY,
    "a requirement or review record does not match its schema",
    """A projected requirement has description, status (unverified, stale, failed, partial,
    accepted, held), optionally id, planning_satisfied, supporting_material_pointer and
    agent_review {conclusion (met, unmet, uncertain), basis_current, independently_verified,
    evidence_refs (at most 8), note, basis_digest}. A stored review item has id, conclusion,
    evidence_refs and note. Schemas: loopx-requirement, loopx-review-item. As in LoopX 2.1.1,
    the requirements of one outcome have distinct ids, and its stored review covers every
    requirement exactly once (no item twice; while the review's basis is current, none left
    out and none for an id the outcome lacks).""",
    hint="see docs/formats.md (captures)",
)
MET_WITHOUT_EVIDENCE = rule(
    "CX141",
    FAMILY,
    "a review concludes met without evidence",
    """A review that concludes "met" cites at least one evidence reference (LoopX 2.1.1 refuses
    it otherwise). A projected requirement without evidence_refs may instead name the review's
    supporting material with supporting_material_pointer.""",
    hint="add the evidence references, or conclude unmet or uncertain",
)
SELF_VERIFIED = rule(
    "CX142",
    FAMILY,
    "an agent's own review claims independent verification",
    """independently_verified is always false on agent_review: an agent's self-review is never
    independent verification.""",
    hint="set independently_verified to false",
)
BASIS_STALE = rule(
    "CX143",
    FAMILY,
    "basis_current is true but the basis digest does not match",
    """basis_current: true needs a basis_digest that still matches: the SHA-256 of the canonical
    JSON of {"objective", "requirements": [{"id", "description"}]} of the outcome that holds the
    requirement (the review's basis_digest in a stored outcome). A review made on another basis
    is stale.""",
    hint="review again on the current basis, or set basis_current to false",
)
SUPPORT_POINTER = rule(
    "CX144",
    FAMILY,
    "supporting_material_pointer does not name material in the capture",
    """supporting_material_pointer is an RFC 6901 pointer into the capture of the same decision
    (projection.json, or the manifest's capture); it must resolve there and must not point at a
    context_ref stub.""",
    hint="take the pointer from the current capture, never from another file",
)

# --- the directory as a whole -----------------------------------------------------------------

DECISION_INCOMPLETE = rule(
    "CX150",
    FAMILY,
    "a decision directory lacks its delivery or manifest",
    """A decision-<id>/ directory with a projection.json is one delivered observation: it holds
    delivery.json (full or delta) and a manifest.json that pins the projection.""",
    hint="write the missing record, or remove the partial directory",
)

# --- history ------------------------------------------------------------------------------

PUBLISHED_CHANGED = rule(
    "CX201",
    FAMILY,
    "a published capture file was rewritten",
    """A published capture, its manifest and its reader references never change (and neither
    does anything else in a decision directory): a new observation is a new directory. The
    commit that rewrote it is named.""",
    hint="revert the rewrite and write the new observation to a new directory",
)
PUBLISHED_DELETED = rule(
    "CX202",
    FAMILY,
    "a published capture file was deleted",
    """A published capture, its manifest and its reader references are never deleted: a later
    reader must be able to re-read the exact bytes it was handed. The commit that deleted it is
    named.""",
    hint="restore the file from the commit before",
)
SYMLINK = rule(
    "CX203",
    FAMILY,
    "a capture file or decision directory committed as a symlink",
    """A capture, its manifest, its reader references, a delivery's records, a cycle's base and
    delta, and a decision-<id>/ directory are committed as what they are, never as symlinks (git
    mode 120000). Committed as one, their bytes live where the link leads, even inside their
    own directory, and a later edit there changes no capture path: CX201 and CX202 never see a
    published capture rewritten. A manifest.json counts beside a capture (in a decision
    directory, or where a capture.json is). The symlinked version is not also judged as
    rewritten (CX201), nor a name leading through it as leaving its directory (CX102).""",
    hint="commit the file or directory itself in place of the link",
)
