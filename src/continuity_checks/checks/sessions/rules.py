"""SS rules: OpenProgram session repositories, history DAGs, registries and agent commits.

SS1xx are file rules (``continuity check``), SS2xx history rules (``continuity verify``). The
number in brackets in each explanation is the invariant of the format specification
(``specs/openprogram-sessions.md`` §4) the rule enforces; E invariants are errors, W warnings.
"""

from continuity_checks.core.findings import Severity
from continuity_checks.core.rules import rule

FAMILY = "sessions"
W = Severity.WARNING

# --- A. session directory and meta.json ----------------------------------------------------------

SESSION_SYMLINK = rule(
    "SS101",
    FAMILY,
    "session directory is a symlink or not named by a safe id",
    """[1] SessionStore opens a session only from a real directory named by a safe id: a symlink
    in its place (to another directory, dangling, or leading off the checked tree) is refused, so
    the session cannot be opened, and a second name for one repository would let two writers
    commit to it as if it were two sessions. A name with "\\" is refused too (its files are also
    CC010: the tool reads no path with "\\"); "/", "." and ".." cannot be a directory's name.
    A session that is the checked root is judged by the path it was named by: a symlink in a
    sessions/ directory, or a "\\" in its name.""",
    hint="move the session's directory to where the symlink is (named by its id), or drop the "
    "symlink",
)
NOT_A_SESSION = rule(
    "SS102",
    FAMILY,
    "session directory lacks .git or history/",
    """[2] A session is a git repository with a history/ directory: SessionStore refuses to open a
    directory without either, so everything in it is invisible to OpenProgram.""",
    hint="restore the session's .git and history/ (a rebuilt session needs both)",
)
META_NOT_OBJECT = rule(
    "SS103",
    FAMILY,
    "meta.json is not a JSON object",
    """[3] meta.json is an open JSON object written whole on every change; anything else makes the
    index rebuild skip the session.""",
    hint="write meta.json as a JSON object",
)
META_IDENTITY = rule(
    "SS104",
    FAMILY,
    "meta.json id, agent_id or created_at missing or wrong",
    """[4] create_session writes id (equal to the directory name), agent_id and created_at. They
    are missing only for sessions created by a bare write, so this is a warning.""",
    severity=W,
    hint="set id to the directory name and add agent_id and created_at",
)
BAD_HEAD = rule(
    "SS105",
    FAMILY,
    "meta.json head_id missing or not a node",
    """[5] meta.json always has head_id: null, the id of a node in history/, or "ROOT", which
    rewind_to writes when it rewinds to the first message (the next turn then starts as in a
    fresh session), whether or not a ROOT node is seeded. A head that names no node leaves the
    session with no current branch.""",
    hint="point head_id at an existing node (the last reply of the current branch)",
)
HEAD_IS_SUMMARY = rule(
    "SS106",
    FAMILY,
    "meta.json head_id is a compaction summary",
    """[6] A compaction summary (a node with metadata.covers_ids) is never a head: branches end at
    conversational nodes.""",
    hint="point head_id at the conversational node after the summary",
)
META_STATUS = rule(
    "SS107",
    FAMILY,
    "meta.json status is not a session status",
    """[7] status is one of idle, running, needs_input, done, failed, interrupted (running at rest
    means the run was interrupted).""",
    severity=W,
    hint="set status to one of the session statuses (idle after a finished run)",
)
META_PROJECT = rule(
    "SS108",
    FAMILY,
    "meta.json project_id missing or malformed",
    """[8] project_id is "default" or proj_ followed by 8 hexadecimal digits.""",
    severity=W,
    hint='set project_id to "default" or the bound project\'s proj_<8 hex> id',
)
META_BRANCHES = rule(
    "SS109",
    FAMILY,
    "meta.json branches or merged_heads name no node",
    """[9] Every key of branches is a node id with an object value (legacy: a string), and every
    entry of merged_heads is a node id.""",
    severity=W,
    hint="drop the branch or merged head that names a deleted node",
)
META_TITLE = rule(
    "SS110",
    FAMILY,
    "meta.json title lock fields are inconsistent",
    """[10] _title_gen_count is an integer 0..5; a count of 1 or more implies _auto_titled; a
    first automatic title (count 1, not user-titled) is the first line of the first user message
    cut to 50 characters plus an ellipsis; automatic titles are at most 80 characters.""",
    severity=W,
    hint="let OpenProgram retitle the session, or set _user_titled after a manual rename",
)

# --- B. history node files -----------------------------------------------------------------------

NODE_NAME = rule(
    "SS111",
    FAMILY,
    "history node file name does not match its content",
    """[11] A node file is named <seq, at least 4 digits>-<first letter of role, x if
    empty>-<id>.json and the content's seq, role and id agree with the name: readers find
    nodes by name.""",
    hint="rename the file to the name its content gives",
)
NODE_SHAPE = rule(
    "SS112",
    FAMILY,
    "history node is not a Call with exactly the 11 keys",
    """[12] A node is one JSON object with exactly id, created_at, seq, role, name, input, output,
    caller, predecessor, reads and metadata: id a non-empty string, created_at a number, seq an
    integer >= 0, role, name and caller strings, predecessor a string or null, reads a list of
    strings, metadata an object. Old names (parent_id, called_by, content, a top-level status) are
    not read.""",
    hint="rewrite the node with the 11 Call keys",
)
NODE_ROLE = rule(
    "SS113",
    FAMILY,
    "history node role is not user, llm or code",
    """[13] role is one of user, llm or code; a system message is stored as llm with
    metadata.role="system".""",
    hint="use role user, llm or code (a system message is llm with metadata.role)",
)
DUPLICATE_NODE = rule(
    "SS114",
    FAMILY,
    "node id or seq used twice in one session",
    """[14] Node ids are unique in a session, and so are seq values (gaps are allowed: deletions
    free seq numbers).""",
    hint="give the later node a fresh seq (and file name), or remove the copy",
)
SEQ_TOO_LARGE = rule(
    "SS115",
    FAMILY,
    "history node seq is 10000 or more",
    """[15] From seq 10000 on, file names have five digits and no longer sort by seq.""",
    severity=W,
    hint="start a new session: names past seq 9999 no longer sort",
)
BAD_ROOT = rule(
    "SS116",
    FAMILY,
    "ROOT node malformed or seeded twice",
    """[16] At most one ROOT node exists, with id ROOT, role user, output "", metadata.display
    "root", caller "" and a null predecessor.""",
    hint="restore the ROOT node as OpenProgram seeds it",
)
DANGLING_EDGE = rule(
    "SS117",
    FAMILY,
    "predecessor or caller names no node",
    """[17] A non-empty predecessor names a node of the session ("ROOT" the seeded ROOT node); a
    caller is "", "ROOT" or a node. Spawn-branch roots (metadata.spawn_branch_root or source
    agent_spawn) may have a caller in another session.""",
    hint="restore the node the edge names, or correct the edge",
)
EDGE_CYCLE = rule(
    "SS118",
    FAMILY,
    "predecessor or caller edges form a cycle",
    """[18] Following predecessor or caller from any node ends: the conversation and call graphs
    are acyclic, or every walk up a branch loops forever.""",
    hint="break the cycle: one node of it has the wrong edge",
)
WRITE_INVARIANT = rule(
    "SS119",
    FAMILY,
    "conversational node without a predecessor",
    """[19] Every user or llm node with caller "" or "ROOT" and a null input has a non-empty
    predecessor, except the ROOT node, spawn roots, compaction summaries (metadata.covers_ids) and
    the session's first conversational node in seq order. Pre-rename data carries the edge only in
    metadata.predecessor, which the current reader ignores.""",
    hint="set predecessor to the node this one follows",
)
TOOL_SHAPE = rule(
    "SS120",
    FAMILY,
    "tool node not shaped as the stream tap writes it",
    """[20] A tool node (role code with metadata.tool_call_id) has an llm caller, a null
    predecessor, the id <caller>_t_<tool_call_id> and a boolean metadata.is_error.""",
    severity=W,
    hint="rewrite the tool node as the stream tap does: <caller>_t_<tool_call_id>",
)
TURN_SHAPE = rule(
    "SS121",
    FAMILY,
    "turn not shaped user -> llm",
    """[21] A top-level llm node (caller "") follows a user node (attach pointers, with
    metadata.function "attach", follow the head); a top-level user node has caller "ROOT".""",
    severity=W,
    hint="give the llm node its user predecessor, and the user node caller ROOT",
)
NODE_STATUS = rule(
    "SS122",
    FAMILY,
    "execution status unknown or terminal without finished_at",
    """[22] metadata.status on llm and code nodes is queued, pending, running, streaming,
    cancelling, completed, cancelled, error, failed or interrupted; terminal values carry
    finished_at.""",
    severity=W,
    hint="set a known status; terminal statuses carry finished_at",
)
METADATA_PREDECESSOR = rule(
    "SS123",
    FAMILY,
    "metadata.predecessor disagrees with predecessor",
    """[23] The dispatcher copies the predecessor edge into metadata; where the copy exists it
    equals the top-level predecessor.""",
    severity=W,
    hint="make metadata.predecessor equal the top-level predecessor, or drop it",
)
BAD_EXTRA = rule(
    "SS124",
    FAMILY,
    "metadata.extra is not JSON text",
    """[24] metadata.extra on an llm node is a string that decodes to JSON ({tool_calls,
    blocks}).""",
    severity=W,
    hint="store metadata.extra as JSON text",
)
SPILL_MISSING = rule(
    "SS125",
    FAMILY,
    "metadata.spilled.path names no large_nodes file",
    """[25] A spilled node's metadata.spilled.path points to large_nodes/<seq:04d>-<id>.txt, which
    exists.""",
    severity=W,
    hint="restore the large_nodes file, or drop metadata.spilled",
)
STRAY_TEMP = rule(
    "SS126",
    FAMILY,
    "stray temporary file in a session",
    """[26] *.tmp files in history/ or the session root are left by interrupted atomic writes.""",
    severity=W,
    hint="remove the temporary file once no OpenProgram process is writing",
)
BACKUP = rule(
    "SS127",
    FAMILY,
    "file_backups turn directory malformed",
    """[36] Each file_backups/<turn>/ is named after an llm node and has a manifest.json
    {backed_at, files: {key: {path (absolute), pre_existing (bool)}}}; entries with pre_existing
    have their backup blob beside the manifest; at most 100 turn directories are kept.""",
    severity=W,
    hint="restore the manifest and blobs, or remove the turn directory",
)

# --- D. registries and projects ------------------------------------------------------------------

INDEX_SHAPE = rule(
    "SS128",
    FAMILY,
    "sessions/index.json entry malformed",
    """[37] index.json is an object of session id to entry; each key equals entry.id, entry keys
    are the index fields plus preview, status is a session status, pinned, archived and unread
    are booleans.""",
    hint="rebuild the index: delete sessions/index.json and let OpenProgram recreate it",
)
INDEX_META = rule(
    "SS129",
    FAMILY,
    "sessions/index.json disagrees with the session",
    """[38] Each index entry has a session (a directory of the sessions root, or a locations.json
    entry), and title, agent_id, source, created_at, updated_at, archived and pinned match its
    meta.json. The flush lags appends by up to 5 s, so updated_at may trail by that much.""",
    severity=W,
    hint="rebuild the index from the sessions' meta.json files",
)
PREVIEW = rule(
    "SS130",
    FAMILY,
    "index preview longer than 80 characters or cut wrongly",
    """[39] preview is the latest user message, stripped, with newlines as spaces, or its first
    77 characters plus an ellipsis: at most 80 characters. The index flush lags appends by up to
    5 s: while its updated_at is behind meta.json's, the preview may still be the one before the
    latest (or empty, before the first message).""",
    severity=W,
    hint="cut the preview to 77 characters plus an ellipsis",
)
LOCATIONS_SHAPE = rule(
    "SS131",
    FAMILY,
    "sessions/locations.json entry malformed",
    """[40] locations.json maps a session id to the absolute path
    <project>/.openprogram/sessions/<same id>.""",
    hint="write the location as <absolute project path>/.openprogram/sessions/<id>",
)
LOCATION_BINDING = rule(
    "SS132",
    FAMILY,
    "location not bound to its project",
    """[41] A location's project root is the path of a non-default project listing the session;
    the session's meta.project_id is that project and its work_dir (if set) is that path.""",
    severity=W,
    hint="rebind the session to its project (projects.json session_ids, meta.project_id)",
)
UNRESOLVED_PATH = rule(
    "SS133",
    FAMILY,
    "absolute path resolves to nothing here",
    """A state directory is checked away from the machine that wrote it: absolute paths in
    locations.json, projects.json and node metadata (project_commit.repo, shadow_git.repo) are
    read through the [sessions] path-map option. By default the default project's path (the
    home directory; before the first ad-hoc chat creates that project, the home inferred from a
    bound project found below it) maps to the directory holding .openprogram/, and node metadata
    is read as the registries of the state directory keeping the session read theirs; a bound
    session with no such state directory in the checked tree reads its work_dir, or else the
    one repository its project_commit stamps name, as its project directory. A shadow_git
    stamp's store is in the state directory keeping the session: with none in the checked tree
    it is reported here. A path that maps nowhere, outside the checked root, or to nothing is
    reported, not followed.""",
    severity=W,
    hint='map the prefix in .continuity.toml: [sessions] path-map = { "/home/alice" = "." }',
)
PROJECTS_SHAPE = rule(
    "SS134",
    FAMILY,
    "projects/projects.json entry malformed",
    """[42] projects.json is an object of project id to {id (equal to the key), name, path,
    is_default (bool), session_ids (strings, no duplicates), status (active, paused, done),
    created_at (number)}.""",
    hint="correct the entry: id, name, path, is_default, session_ids, status, created_at",
)
DEFAULT_PROJECT = rule(
    "SS135",
    FAMILY,
    "more than one default project, or a malformed project id",
    """[43] At most one project has is_default, with id "default"; other ids match
    ^proj_[0-9a-f]{8}$. The spec says exactly one, but OpenProgram creates the default project
    lazily, at the first ad-hoc chat: a state directory that has only held project-bound sessions
    has none, and its absolute paths are then read with the home directory inferred from a
    bound project found in the checked tree (see SS133).""",
    hint='keep one default project with id "default"; name others proj_<8 hex>',
)
PROJECT_ID_HASH = rule(
    "SS136",
    FAMILY,
    "project id is not the hash of its path",
    """[44] A project's id is proj_ + sha1(lowercased resolved path)[:8]; relocated or claimed
    projects keep their old id, so this is a warning.""",
    severity=W,
    hint="leave it if the project was relocated; otherwise re-register the project",
)
PROJECT_SESSIONS = rule(
    "SS137",
    FAMILY,
    "session listed by two projects or by none that exists",
    """[45] A session id appears in the session_ids of at most one project, and every listed id
    has a session directory (prune_sessions removes the others).""",
    severity=W,
    hint="remove the id from all but one project, or prune sessions that no longer exist",
)
PROJECT_GITIGNORE = rule(
    "SS138",
    FAMILY,
    "project .openprogram/.gitignore is not exactly *",
    """[46] resolve_project writes <project>/.openprogram/.gitignore containing exactly "*" and a
    newline, so that no session state reaches the user's repository.""",
    hint='write "*" and a newline to .openprogram/.gitignore',
)
GC_PENDING = rule(
    "SS143",
    FAMILY,
    "index entry that startup GC would delete",
    """[56] Startup GC deletes entries older than 1 h with no history files, archived entries
    older than 90 days, and archived entries past 1000; finding one means GC has not run since.""",
    severity=W,
    hint="start OpenProgram once so that its startup GC runs, or delete the entry",
)
BRANCHES = rule(
    "SS144",
    FAMILY,
    "session repository has a branch other than main",
    """[27] Current code uses only the branch main. A retry-<assistant_id> branch is the
    proposal's (seed 003) retry scheme and is reported as a warning by SS145; any other branch is
    an error.""",
    hint="delete the branch: only main is used by the current code",
)
RETRY_BRANCH = rule(
    "SS145",
    FAMILY,
    "session repository has a retry-* branch",
    """[27] The entity-memory proposal maps a DAG retry to a git branch retry-<assistant_id>; the
    current code never creates one.""",
    severity=W,
    hint="delete the retry branch or keep it knowingly (the proposal's scheme)",
)

# --- C. session git history (continuity verify) ------------------------------------------------

SESSION_ROOT = rule(
    "SS201",
    FAMILY,
    "session history does not start with an empty session init, or is not linear",
    """[28] GitSession makes one empty root commit "session init" and then commits on main only:
    a different root, or a merge, is not history OpenProgram wrote.""",
    hint="rebuild the session repository from its files with a fresh session init",
)
EMPTY_COMMIT = rule(
    "SS202",
    FAMILY,
    "empty commit in a session repository",
    """[29] commit_all stages everything and makes no commit when nothing changed, so every commit
    after the root changes something.""",
    hint="drop the empty commit",
)
SESSION_IDENTITY = rule(
    "SS203",
    FAMILY,
    "session commit not made by OpenProgram <openprogram@local>",
    """[30] GitSession sets the repository-local identity OpenProgram <openprogram@local>; another
    author or committer means someone else wrote to the session's history.""",
    severity=W,
    hint="let OpenProgram commit its sessions; edit session files through OpenProgram",
)
SESSION_SUBJECT = rule(
    "SS204",
    FAMILY,
    "session commit subject is not one OpenProgram writes",
    """[31] Subjects are "turn: <60 chars>", "turn (error): <60 chars>", "rewind", "merge: …",
    "agent tool spawn[ (async)]: …", "send_message: inbox notice" or "job: …", on one line.""",
    severity=W,
    hint="leave session commits to OpenProgram",
)
COMMITTED_INVALID = rule(
    "SS205",
    FAMILY,
    "a commit writes an invalid node or meta.json",
    """[32] In every commit's tree each history/*.json is a valid node (name, 11 keys, role) and
    meta.json parses: replay and rewind read old commits.""",
    hint="fix the file in a new commit; the message names the file rule that fails",
)
NAME_STABILITY = rule(
    "SS206",
    FAMILY,
    "node file renamed across commits, or its seq reused too early",
    """[33] A node's seq and role never change, so every commit that holds a node id holds it
    under the same file name; a seq is reused by another id only after the file that used it
    was deleted.""",
    hint="restore the node's original file name",
)
TURN_COMMITS = rule(
    "SS207",
    FAMILY,
    "not one commit per turn",
    """[34] One commit per turn: a "turn" commit completes exactly one turn, i.e. one top-level
    user node (not ROOT, not a spawn root) is new since the previous turn commit. Another commit
    (a job, an inbox notice) may carry the first nodes of the turn in progress. None or several
    at a turn commit, or two answered turns before any turn commit, mean turns were committed
    together or not at all.""",
    severity=W,
    hint="commit each turn on its own (OpenProgram does at finalize)",
)
PROJECT_STATE_COMMITTED = rule(
    "SS208",
    FAMILY,
    "project commit adds or changes a path under .openprogram/",
    """[47] OpenProgram keeps its state out of the user's repository (.openprogram/.gitignore is
    "*"); a commit that brings .openprogram/ in pollutes the user's history with session state.
    Every path the commit adds or changes under the project's top-level .openprogram/ counts,
    whether it is a session file or not (settings.json), and so does a session repository
    committed as a nested repository (a gitlink: git add -A once .openprogram/.gitignore is
    lost); a deletion there is the cure.""",
    severity=W,
    hint="git rm -r --cached .openprogram and restore .openprogram/.gitignore",
)
AGENT_SUBJECT = rule(
    "SS209",
    FAMILY,
    "agent commit with a subject OpenProgram does not write",
    """[48] Commits by OpenProgram Agent <agent@openprogram.local> are "[agent <sid[:8]>] <60
    chars>", "Revert agent commit <8 hex>", or, as the repository's first commit only,
    "openprogram: baseline (pre-existing files)" or "openprogram: project init". In
    OpenProgram's shadow-git store (<state>/shadow-git/<hash>/, recognised by its root commit
    "shadow-git: init" or a "[baseline] pre-turn images" commit in the range), they are
    "shadow-git: init" as the root commit, "[baseline] pre-turn images" and
    "[<turn id[:8]>] <text>"; a range of a store that holds neither is taken for a project
    repository, and the finding says so.""",
    severity=W,
    hint="commit your own changes under your own identity",
)

# --- E. memory and provenance --------------------------------------------------------------------

ARCHIVE = rule(
    "SS139",
    FAMILY,
    "v2 source archive incomplete or malformed",
    """[50] A memory/sources/**/_v2/*.md archive starts with its marker and an empty line, then
    frames (anchor source-<sha256(ref)[:16]>, source-id, optional canonical speaker-id and
    source-meta, record-lines:N, N record lines, an empty line) whose refs agree with the file's
    path and appear once. OpenProgram's scanner stops at the first bad frame, losing the rest.""",
    hint="repair the frame at the reported line (the archive is append-only: restore it from git)",
)
ARCHIVE_REF = rule(
    "SS140",
    FAMILY,
    "archived turn does not match its session node",
    """[51] An openprogram/<sid>/<nid> frame names a session that exists (a deleted session leaves
    it dangling: a warning), a user or llm node of it, and its record text is that node's output
    exactly.""",
    severity=W,
    hint="leave archived records as OpenProgram wrote them; a changed node is a new turn",
)
MEMORY_MARKER = rule(
    "SS141",
    FAMILY,
    "node marked as written to memory has no archive frame",
    """[52] A node whose metadata.memory_written_scriptorium is the workspace id
    (memory/.scriptorium/workspace-id) has a v2 frame openprogram/<sid>/<nid> in that
    workspace's archive.""",
    severity=W,
    hint="re-run the memory transaction for the session, or drop the marker",
)
TOPIC = rule(
    "SS142",
    FAMILY,
    "topic footnote malformed, unresolvable, or block id reused",
    """[53] A topic footnote reads [^id]: Time: `<YYYY[-MM[-DD]]|undated>`; Sources:
    [<ref>](<path>#<anchor>), …; each source link resolves (relative to the topic file) to an
    archive holding the anchor; each block id is unique in the workspace.""",
    hint="correct the footnote's link, or give the block a fresh id",
)
UNSOURCED_BLOCK = rule(
    "SS146",
    FAMILY,
    "topic block cites no resolvable source",
    """[55] The proposal's provenance invariant ("every abstract memory points back") as the code
    stores it: every topic block cites at least one footnote with at least one resolvable
    source.""",
    severity=W,
    hint="cite the turn the claim came from",
)
PROVENANCE = rule(
    "SS147",
    FAMILY,
    "Provenance record malformed",
    """[55, seed 003] The proposal's abstract-memory records (memory/timeline/*.jsonl,
    memory/graph/*.jsonl) carry provenance {project_id, session_id, node_ids, commit (optional),
    event_time, ingestion_time}. Current code writes none; when present they are validated.""",
    hint="write provenance with the six fields of the proposal",
)
PROVENANCE_REF = rule(
    "SS148",
    FAMILY,
    "Provenance record points to no session or node",
    """[55, seed 003] A provenance's session_id and node_ids name a session and its nodes;
    deleting a session leaves such pointers dangling (readers skip them), so this is a
    warning.""",
    severity=W,
    hint="drop or supersede the record whose source was deleted",
)
SOURCE_REWRITTEN = rule(
    "SS210",
    FAMILY,
    "source archive rewritten or deleted",
    """[54] Sources are append-only evidence: across the history of the repository holding the
    memory workspace, each memory/sources/**/_v2/*.md archive's previous bytes are a prefix of
    its new bytes, a legacy (non-_v2) archive never changes, and no archive is deleted. In a
    repository that is the workspace itself (.scriptorium/ at its top) the same holds for
    sources/.""",
    severity=W,
    hint="restore the archive's earlier bytes and append instead",
)
PROJECT_COMMIT = rule(
    "SS149",
    FAMILY,
    "project_commit or shadow_git names no commit the agent made",
    """[49] An llm node's metadata.project_commit {repo, sha} names an existing commit of the
    project repository whose subject starts with [agent <session id[:8]>] and whose author or
    committer is OpenProgram Agent <agent@openprogram.local>; metadata.shadow_git {repo, before,
    after} names commits of the shadow-git store of the project repo, which OpenProgram keeps
    in <state>/shadow-git/<first 16 hex digits of sha256(normpath(repo))>/ of the state
    directory keeping the session (repo is the project, not the store). Read through the
    snapshot: loose objects and version-2 pack indexes, a commit stored as a delta rebuilt from
    its base wherever the repository keeps it (the same pack, another pack, loose); an object
    that cannot be rebuilt into a commit, or that lies in a file the tool will not read (a pack
    over limits.max-file-bytes), is reported too.""",
    severity=W,
    hint="the project's history was rewritten after the turn: re-stamp or drop the metadata",
)
MARKER_NOT_JUDGED = rule(
    "SS150",
    FAMILY,
    "memory markers not judged: the workspace is not in the checked tree",
    """[52] A node marked memory_written_scriptorium must have its frame in the memory workspace
    of the state directory that keeps the session: <state>/memory/ beside <state>/sessions/ for
    a session of the home root, and for a project-bound session the state directory whose
    sessions/locations.json lists it there. When no such state directory is inside the checked
    root (a session repository or a project checked on its own), the frames cannot be looked
    for: this says so once per session instead of passing in silence.""",
    severity=W,
    hint="check the home directory that holds .openprogram/ (with a path-map when it was moved)",
)
SYMLINK = rule(
    "SS211",
    FAMILY,
    "session file or OpenProgram directory committed as a symlink",
    """OpenProgram writes its files and directories as what they are: a session's meta.json,
    history nodes and backup manifests, the registries, memory archives, topics and records,
    and the directories that hold them (a session's history/ and file_backups/, a session
    directory in a sessions/ registry, the registries' sessions/ and projects/, a memory
    workspace's sources/, topics/, timeline/ and graph/, .openprogram) are never committed as
    symlinks (git mode 120000). Committed as one, their content lives where the link leads,
    and a later edit there changes none of the session's paths: SS205, SS206 and SS210 never
    see it, and a session directory OpenProgram refuses to open (SS101) enters history. The
    symlinked version is not judged again by those rules; under .openprogram/ of a project
    repository, SS208 is the finding.""",
    hint="commit the file or directory itself in place of the link",
)
