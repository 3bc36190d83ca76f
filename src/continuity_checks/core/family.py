"""The seam between the engine and a family: what a family declares, and what it is handed.

A family is declared once (:class:`Declaration`) in its package's ``__init__``; configuration
validation, ``--family`` choices, the hook manifest and the rules page are derived from that
declaration. The engine drives the family through four calls (:class:`Family`, which a family's
class inherits: its optional methods have defaults; a family that judges the tree as the files
stream by gives its own :class:`TreeCheck` instead of ``check_tree``) and hands it
everything it may read as a :class:`~continuity_checks.core.snapshot.Snapshot`: the work tree in
file mode, a commit's tree (and its first parent's) in history mode. A family never opens a file
itself.
"""

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from continuity_checks.core.config import Config, strings
from continuity_checks.core.findings import Finding
from continuity_checks.core.frozen import Frozen
from continuity_checks.core.git.log import FIELDS
from continuity_checks.core.git.log import Commit as Commit  # re-exported: families use it
from continuity_checks.core.git.log import RawChange as RawChange  # re-exported, as Commit
from continuity_checks.core.snapshot import Snapshot

#: The commit fields a family may ask history mode for (dates are strict ISO 8601).
COMMIT_FIELDS = frozenset(FIELDS)

#: The id of the prospective commit (what is staged, against HEAD) that the commit hook checks
#: with the history rules: it has no message yet, so no subject and no trailers.
STAGED = "staged"


class Command:
    """A command of the ``continuity`` program: its ``name``, the function that runs it
    (``target``, ``"module:function"``, imported only when the command runs; it takes the
    command's own arguments and returns the exit code) and its one line in ``continuity --help``.
    A plain class: every run imports it, and a dataclass or a NamedTuple costs start-up time."""

    __slots__ = ("help", "name", "target")

    def __init__(self, name: str, target: str, help: str) -> None:
        self.name = name
        self.target = target
        self.help = help

    def __repr__(self) -> str:
        return f"Command({self.name!r}, {self.target!r}, {self.help!r})"


class Declaration(Frozen):
    """Everything the rest of the program knows about a family without importing it.

    ``name`` is the ``--family`` value and the name of the family's configuration table;
    ``family`` (``"module:Class"``) and ``rules`` (the module that registers its rules) are
    imported only when needed. ``files`` is the pre-commit ``files`` pattern of the family's own
    hook (``hook_id``). History mode gives the family the commit ``fields`` and ``trailers`` it
    names, every commit of the range when ``every_commit`` (also commits that touch none of its
    paths: empty commits, merges), and submodule entries when ``gitlinks``. ``history_state``:
    how it judges a commit depends on earlier commits than its parent (what it remembers
    across the run); ``verify --shard`` then replays the commits before the shard to it first,
    until its optional ``history_needed()`` says the rest cannot matter. ``commands``: the
    family's helper commands (they write its files), listed by ``continuity --help`` beside the
    core commands.
    """

    _fields = (
        "name",
        "family",
        "rules",
        "prefix",
        "summary",
        "files",
        "hook_id",
        "options",
        "fields",
        "trailers",
        "every_commit",
        "gitlinks",
        "history_state",
        "commands",
    )
    __slots__ = _fields
    name: str
    family: str
    rules: str
    prefix: str
    summary: str
    files: str
    hook_id: str
    options: tuple[str, ...]
    fields: frozenset[str]
    trailers: tuple[str, ...]
    every_commit: bool
    gitlinks: bool
    history_state: bool
    commands: tuple[Command, ...]

    def __init__(
        self,
        name: str,
        family: str,
        rules: str,
        prefix: str,
        summary: str,
        files: str,
        hook_id: str,
        options: tuple[str, ...] = (),
        fields: frozenset[str] = frozenset(),
        trailers: tuple[str, ...] = (),
        every_commit: bool = False,
        gitlinks: bool = False,
        history_state: bool = False,
        commands: tuple[Command, ...] = (),
    ) -> None:
        unknown = fields - COMMIT_FIELDS
        if unknown:
            raise ValueError(f"{name}: unknown commit fields {sorted(unknown)}")
        if not (len(prefix) == 2 and prefix.isupper()):
            raise ValueError(f"{name}: a rule prefix is two capital letters")
        for command in commands:
            module, colon, function = command.target.partition(":")
            if not (module and colon and function):
                raise ValueError(
                    f"{name}: the target of command {command.name!r} is not 'module:function'"
                )
        self._set(
            name,
            family,
            rules,
            prefix,
            summary,
            files,
            hook_id,
            options,
            fields,
            trailers,
            every_commit,
            gitlinks,
            history_state,
            commands,
        )


class FileInput(NamedTuple):
    """One claimed file: its root-relative ``/`` path, what the family claimed it as, its bytes
    (read once by the engine) and the snapshot it was read from, for its neighbours."""

    path: str
    kind: str
    data: bytes
    snapshot: Snapshot


class Claimed(NamedTuple):
    """A path a family claimed, and as what."""

    path: str
    kind: str


class Names(NamedTuple):
    """The files of one directory a family may claim, by name: a name in ``names`` or ending
    with one of ``endings``. ``claims`` answers None for every other file of the directory."""

    names: frozenset[str]
    endings: tuple[str, ...]


class Change:
    """One claimed path that a commit added (``A``), modified (``M``) or deleted (``D``).

    ``old()`` and ``new()`` are the bytes of the two versions: None when the version does not
    exist (``old_blob``/``new_blob`` is None), and also when it does but is larger than
    ``limits.max-file-bytes``: it is not read, and the engine reports CC008 for it. The old
    version is the path's last good one (see ``docs/history-checks.md``): when the parent's was
    not good (an error, a deletion, a symlink), an earlier one, so a re-add can be ``M``, and a
    commit that puts the last good bytes back is an ``M`` whose two blobs are the same. Two
    changes are equal when all but their reader are.
    """

    __slots__ = ("_read", "kind", "new_blob", "new_mode", "old_blob", "path", "status")

    def __init__(
        self,
        path: str,
        kind: str,
        status: str,
        old_blob: str | None,
        new_blob: str | None,
        _read: Callable[[str], bytes | None],
        new_mode: str = "",
    ) -> None:
        self.path = path
        self.kind = kind
        self.status = status
        self.old_blob = old_blob
        self.new_blob = new_blob
        self._read = _read
        #: git's mode of the new version (``100644``, ``120000`` for a symlink); "" when
        #: deleted or not known
        self.new_mode = new_mode

    def old(self) -> bytes | None:
        return None if self.old_blob is None else self._read(self.old_blob)

    def new(self) -> bytes | None:
        return None if self.new_blob is None else self._read(self.new_blob)

    def judged_as(self, status: str, old_blob: str | None) -> "Change":
        """This change with another status and old version (the same new version)."""
        return Change(
            self.path, self.kind, status, old_blob, self.new_blob, self._read, self.new_mode
        )

    def _values(self) -> tuple[str, str, str, str | None, str | None, str]:
        return (self.path, self.kind, self.status, self.old_blob, self.new_blob, self.new_mode)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Change:
            return NotImplemented
        assert isinstance(other, Change)
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable: never a key

    def __repr__(self) -> str:
        path, kind, status, old_blob, new_blob, new_mode = self._values()
        return (
            f"Change(path={path!r}, kind={kind!r}, status={status!r}, old_blob={old_blob!r}, "
            f"new_blob={new_blob!r}, new_mode={new_mode!r})"
        )


class CommitContext:
    """Everything a family sees of one commit: its claimed changes, all at once (a family can
    pair a deletion with an addition: a freeze is ``D X.json`` + ``A X.frozen.json``), and the
    trees on both sides — ``after`` the commit's, ``before`` its first parent's (empty for a root
    commit) — for anything else it needs to read at that point of history."""

    __slots__ = ("after", "before", "changes", "commit", "others", "paths")

    def __init__(
        self,
        commit: Commit,
        changes: list[Change],
        before: Snapshot,
        after: Snapshot,
        paths: "Sequence[RawChange]" = (),
        others: Sequence[Snapshot] = (),
    ) -> None:
        self.commit = commit
        self.changes = changes
        self.before = before
        self.after = after
        #: every path the commit changes, claimed by any family or by none (path, status, blob
        #: ids, modes): for a family whose files pin others (a SHA256SUMS lists artifacts it
        #: does not claim) and must see when one of those changes
        self.paths = paths
        #: the trees of a merge's other parents (empty for any other commit): whether a change
        #: the merge shows against its first parent was brought in from a side (some other
        #: parent has the same version) or made by the merge itself
        self.others = others

    def with_changes(self, changes: list[Change]) -> "CommitContext":
        """This commit's context with other claimed changes."""
        return CommitContext(self.commit, changes, self.before, self.after, self.paths, self.others)


#: Where files came from, for a family that asked (``finish_commits``): for each path given, the
#: newest commit before the run (reachable from the range's base; from ``HEAD`` for the commit
#: being made) that added it, with the commit fields the family declared. One git process for
#: all the paths of one call; a path no commit added is left out. Call it once.
Origins = Callable[[Iterable[str]], Mapping[str, Commit]]


class Family(Protocol):
    """One system's files. Constructed with the run's configuration; a bad option raises
    ``ConfigError`` from ``__init__``.

    A family's class inherits this one: the engine calls every method declared here, and the
    optional ones (from :meth:`tree` on) have the defaults of a family that does not need them.
    """

    def claims(self, path: str) -> str | None:
        """The kind of continuity file ``path`` is for this family, or ``None``. Path only: the
        same answer in file mode and in history mode."""

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        """Findings for one file on its own (schema, structure, its immediate neighbours)."""

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        """Cross-file findings over what was claimed in this run (every claimed file that
        could be read, in the order the engine met them). The engine keeps the list for it
        (:class:`CollectedTree`) unless the family gives its own :meth:`tree`."""

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        """History findings for one commit: old and new version of each claimed change."""

    def dependents(self, path: str, tree: Snapshot, edited: bool) -> Iterable[str]:
        """The files of ``tree`` this family claims that a change of ``path`` (added, modified
        or deleted; claimed by any family or by none) can break without touching them: enough
        of them that their file and tree checks, run on ``tree``, make every finding such a
        change can cause (a session's other nodes for a node, the manifest that pins a capture,
        the listings that name an artifact). ``path`` itself need not be among them.
        ``edited``: the change only rewrote the bytes of a regular file, which is one on both
        sides, so a check that reads only whether ``path`` exists is not among them."""

    def dependents_between(
        self, path: str, tree: Snapshot, other: Snapshot, edited: bool
    ) -> Iterable[str]:
        """:meth:`dependents` of a change of ``path`` in ``tree``, told the tree on the other
        side of the change (``other``: the parent's tree when ``tree`` is the commit's, and the
        commit's when it is the parent's), so that a dependent whose findings are the same in
        both trees may be left out. Default: :meth:`dependents`, without ``other``."""
        return self.dependents(path, tree, edited)

    def may_depend(self, path: str, edited: bool) -> bool:
        """Whether :meth:`dependents` can name any file for a change of ``path`` (``edited`` as
        there), in any tree at any point of a run: path only, like ``claims``, so that the
        engine asks once per path and calls ``dependents`` only where this is true. Default:
        yes."""
        return True

    def tree_reads_bytes(self) -> bool:
        """Whether the family's tree check can read the bytes of a file (the default). False:
        it reads only which files were claimed and which paths exist in the tree, so a change
        that only rewrote the bytes of a regular file (``edited``, as for :meth:`dependents`)
        makes the same tree findings in the commit's tree and in its parent's, and the state a
        commit leaves does not feed that file to the tree check for its change alone."""
        return True

    def tree_may_find(self, path: str, kind: str, tree: Snapshot) -> bool:
        """Whether the tree check, fed the claimed file ``path`` (``kind``) of ``tree``, can
        make a finding it would not make without it. Asked in the state a commit leaves of a
        family whose tree check reads no bytes (:meth:`tree_reads_bytes`), for a file it judges
        for more than its bytes; False: the file is not fed to it. Default: yes."""
        return True

    def claimable(self, directory: str) -> Names | None:
        """Which names of files directly in ``directory`` (root-relative, ``""`` for the root)
        :meth:`claims` may claim, so that the engine asks about only those; None (the default)
        when any name may be. Path only, like ``claims``."""
        return None

    def tree(self, snapshot: Snapshot) -> "TreeCheck":
        """One file-mode run's cross-file check, fed as the files stream by. The default keeps
        the claimed files and calls :meth:`check_tree` once at the end; a family with many
        files judges them as they come (and ``check_tree`` is then not called)."""
        return CollectedTree(snapshot, self.check_tree)

    def before_workers(self, kinds: Collection[str]) -> None:
        """Called in file mode's process before it forks the workers that read and check the
        files, when the files it has looked ahead at include this family's (``kinds``: their
        kinds): load here what each worker's :meth:`check_file` would otherwise load on its
        own (a compiled schema), so that the workers inherit it. Default: nothing."""
        return None

    def unread(self, path: str) -> str | None:
        """For a path the family does not claim: why no check of it reads the file, when the
        path lies in the family's territory (directories of its own: ``.deltalayer/``,
        ``.dsh/``, a decision directory, ``.openprogram/``), so that file mode names it in a
        note instead of passing it over in silence; None elsewhere (the default: no
        territory). Path only, like ``claims``."""
        return None

    def unjudged(self, item: Claimed, snapshot: Snapshot) -> str | None:
        """Why no check reads the claimed file in ``snapshot``, or None when it is judged (the
        default). A family that claims by name a file it judges only in some trees (a
        ``capture.json`` is LoopX's only when a manifest beside it names it) says why here:
        file mode asks before counting the file as checked, and names a skipped one in a note
        with the reason."""
        return None

    def same_cause(self, history: Finding, state: Finding) -> bool:
        """Whether the history finding ``history`` names the cause of the error ``state`` the
        same commit leaves in its tree at the same path (an original rewritten: the history
        rule, and the listing's mismatch at the same entry). The engine reports a state finding
        only when this is false for every history finding of the same commit and path, so that
        one root cause is reported once. Default: never."""
        return False

    def finish_commits(self, origins: Origins) -> Iterable[tuple[Commit, Finding]]:
        """After the last commit of a run (history mode, or the commit being made): the
        findings still to make that need where some files came from before the run, through
        one :data:`Origins` look-up for all of them, each with the commit it is about (for its
        hint). Default: none."""
        return ()

    def commit_needed(self, commit: Commit, paths: "Sequence[RawChange]", symlinked: bool) -> bool:
        """Whether :meth:`check_commit` can find anything in, or learn anything from, a commit
        none of whose changes the family claims (asked only of a family that declares
        ``every_commit``, for such a commit): ``paths``, every path the commit changes;
        ``symlinked``, whether it leaves any of them a symlink. False only where
        ``check_commit`` would return nothing (what it would remember of the commit is
        remembered here): the engine then does not call it. Default: yes."""
        return True

    def history_needed(self) -> bool:
        """Whether commits before a shard can still change how this family judges the shard's
        commits (asked of a family whose declaration has ``history_state`` while
        ``verify --shard`` replays the earlier commits to it). Default: yes."""
        return True


def judges_every_claim(family: Family) -> bool:
    """Whether ``family`` keeps the default :meth:`Family.unjudged`: it judges every file it
    claims, in any tree, so that no one need ask it file by file."""
    return type(family).unjudged is Family.unjudged


class TreeCheck(Protocol):
    """One file-mode run's cross-file check, fed as the engine goes.

    The engine walks its sources as a stream (a directory's files in sorted order, so every
    directory's files arrive together) and hands each claimed file to :meth:`add` in that
    order, in the engine's own process, before the file is read (the reading may happen in a
    worker process). After the last one, :meth:`finish` gets the claimed paths whose bytes could
    not be read (the engine reported them) and gives the findings left. What it holds between
    the two is its own choice: a family whose files fall into independent units (a session, a
    workspace) judges a unit when the stream moves past it and keeps nothing of it, so its
    memory does not grow with the number of units."""

    def add(self, path: str, kind: str) -> None:
        """A claimed file: its path, and what the family claimed it as (as :class:`Claimed`,
        whose tuple is not made per file)."""

    def finish(self, unread: Collection[str]) -> Iterable[Finding]: ...


class CollectedTree:
    """The :class:`TreeCheck` of a family without one of its own: every claimed item kept,
    ``check_tree`` called once at the end with those that could be read (when there are any)."""

    def __init__(
        self,
        snapshot: Snapshot,
        check_tree: Callable[[Snapshot, list[Claimed]], Iterable[Finding]],
    ) -> None:
        self.snapshot = snapshot
        self.check_tree = check_tree
        self.items: list[Claimed] = []

    def add(self, path: str, kind: str) -> None:
        self.items.append(Claimed(path, kind))

    def finish(self, unread: Collection[str]) -> Iterable[Finding]:
        items = [i for i in self.items if i.path not in unread] if unread else self.items
        self.items = []
        return self.check_tree(self.snapshot, items) if items else ()


def options(config: Config, declaration: Declaration) -> Mapping[str, Any]:
    """The family's configuration table, with unknown keys refused."""
    table = config.family_options(declaration.name)
    for key in table:
        if key not in declaration.options:
            raise config.error(
                f"{declaration.name}.{key}",
                f"unknown option; expected one of {', '.join(sorted(declaration.options))}",
            )
    return table


def option(config: Config, family: str, key: str, default: Any, allowed: Iterable[Any]) -> Any:
    """One family option, checked against its allowed values."""
    value = config.family_options(family).get(key, default)
    allowed = list(allowed)
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise config.error(
            f"{family}.{key}", f"expected one of {', '.join(map(repr, allowed))}, found {value!r}"
        )
    return value


def strings_option(
    config: Config, family: str, key: str, default: Sequence[str], what: str
) -> tuple[str, ...]:
    """One family option that is a list of strings (``what``: "glob strings", ...), checked
    by the one rule of such options (:func:`~continuity_checks.core.config.strings`);
    ``default`` when the table does not set it."""
    table = config.family_options(family)
    if key not in table:
        return tuple(default)
    return strings(config.source, f"{family}.{key}", table[key], what)
