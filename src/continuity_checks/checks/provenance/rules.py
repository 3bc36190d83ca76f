"""PV rules: SHA256SUMS-style files, provenance manifests and the artifacts they pin.

PV1xx are file rules (``continuity check``), PV2xx history rules (``continuity verify``). A
listed path that leads outside the root is the core rule CC010, and a listed file that cannot be
read (or is over the size limit) is CC001 (CC008): the same rules every family reports them with.
"""

from continuity_checks.core.findings import Severity
from continuity_checks.core.rules import rule

FAMILY = "provenance"

EMPTY = rule(
    "PV101",
    FAMILY,
    "sums file or manifest lists nothing",
    """A SHA256SUMS-style file without a single checksum line (empty, or only comments and blank
    lines) verifies nothing. sha256sum -c fails on it too ("no properly formatted checksum lines
    found"). An empty provenance file is a mistake, not a pass.""",
    hint="list the artifacts (continuity provenance add FILE...), or delete the file",
)
MALFORMED = rule(
    "PV102",
    FAMILY,
    "line is not a SHA-256 checksum line",
    """Each line of a sums file is one checksum: GNU text (`<hex>  <path>`) or binary
    (`<hex> *<path>`), a GNU escaped line (starting with a backslash, with \\\\, \\n and \\r
    escapes in the path), or BSD tag form (`SHA256 (<path>) = <hex>`), with 64 hex digits.
    Lines starting with # are comments. Anything else (another algorithm, a short digest, a
    missing path, an unknown escape) is a line no verifier can use, so the file it meant to pin
    is not verified.""",
    hint="write the line as `<64 hex digits>  <path>`",
)
MISSING = rule(
    "PV103",
    FAMILY,
    "listed file does not exist",
    """A sums file or provenance manifest lists a file that is not in the tree. Either the
    artifact was removed (evidence lost) or the listing names it wrongly (a typo, a path relative
    to the wrong directory: paths are relative to the root unless `relative-to = "sums-file"`).""",
    hint="restore the file, or fix the path in the listing",
)
MISMATCH = rule(
    "PV104",
    FAMILY,
    "listed file does not match its digest",
    """The SHA-256 of the file's bytes is not the digest listed for it. Evidence that was listed
    must stay byte-identical; a changed file is a different artifact (a derived one, under its own
    name). Line-ending conversion (git's autocrlf, an editor) is a common cause.""",
    hint="restore the original bytes (git checkout), or list the new file under a new name",
)
DUPLICATE = rule(
    "PV105",
    FAMILY,
    "path listed more than once",
    """The same path appears twice in one listing: in a sums file with two digests, of which at
    most one can match (sha256sum -c fails the other); in a manifest, whatever the digests. A sums
    file's line that repeats an earlier line's digest is PV109. Each artifact is listed once.""",
    hint="keep one line per path",
)
SIZE = rule(
    "PV106",
    FAMILY,
    "listed size differs from the file's",
    """A provenance manifest records each artifact's size in bytes next to its SHA-256; the file in
    the tree has another size.""",
    hint="restore the original bytes, or fix the recorded size",
)
BAD_MANIFEST = rule(
    "PV107",
    FAMILY,
    "provenance manifest does not match its schema",
    """A provenance manifest is a JSON object {"version": 1, "artifacts": [...]}; each artifact has
    path, sha256 (64 lowercase hex digits), size, role ("original" or "derived"), and a derived
    artifact names the original it came from (derived_from) and how (derivation). See the schema
    provenance-manifest (continuity schema show provenance-manifest).""",
    hint="fix the value at the pointer shown",
)
BAD_ORIGIN = rule(
    "PV108",
    FAMILY,
    "derived artifact does not name an original of the manifest",
    """derived_from names the path of the original this artifact was made from; that path must be
    an artifact of the same manifest with role "original". Otherwise the chain from published
    derivative back to primary evidence is broken.""",
    hint="list the original in the manifest (in_repository: false when it is kept elsewhere)",
)
REPEATED = rule(
    "PV109",
    FAMILY,
    "sums file lists a path twice with the same digest",
    """Two lines of a sums file name the same path (`a` and `./a` count as the same) with the
    same digest. sha256sum -c verifies both, so nothing fails; but the second line pins nothing
    the first does not, and an edit of one of the two lines later leaves two digests (PV105).""",
    severity=Severity.WARNING,
    hint="delete the second line",
)

# --- history ----------------------------------------------------------------------------------

DIGEST_CHANGED = rule(
    "PV201",
    FAMILY,
    "listed artifact's digest changed",
    """Once a path is listed with a digest, the digest never changes: a listing is a promise that
    those exact bytes are preserved. Re-hashing an artifact after editing it erases that promise.
    A new version of an artifact is a new artifact under a new name.""",
    hint="restore the old digest and the old bytes; list the new bytes under a new path",
)
ENTRY_REMOVED = rule(
    "PV202",
    FAMILY,
    "listed artifact's entry was removed",
    """An entry once listed stays listed: removing the line (or the whole listing) drops the only
    record of what the artifact's bytes were. This holds across renames of the listing file too:
    move the entries with it in the same commit.""",
    hint="restore the entry",
)
ORIGINAL_CHANGED = rule(
    "PV203",
    FAMILY,
    "original artifact's bytes changed",
    """A file listed as an original (a sums entry, or a manifest artifact with role "original")
    must keep its bytes. The commit changed or deleted it while a listing still pinned it with
    the digest it had before: at any commit, whether or not the commit also edits the listing
    (re-hashing the entry is PV201, removing it PV202).""",
    hint="restore the original bytes; publish a changed version as a derived artifact",
)
ORIGINAL_EXEMPTED = rule(
    "PV204",
    FAMILY,
    "original artifact's entry stops pinning it",
    """A listed original's bytes are pinned: PV203 reports any change of them. A manifest entry
    that declares an original kept outside the repository ("in_repository": false) or not an
    original at all (a role other than "original") pins nothing, so a commit that turns a
    pinned original's entry into such an entry, in place or by moving a sums entry into a
    manifest so, drops the pin while the entry stays listed. That change of the pin is reported
    at the commit that makes it: otherwise the next commit could rewrite the original and pass.
    Changing the digest too is PV201, removing the entry PV202.""",
    hint='restore the entry as an original kept in the repository (role "original", no '
    '"in_repository": false)',
)
SYMLINK = rule(
    "PV205",
    FAMILY,
    "sums file or manifest committed as a symlink",
    """A sums file or a provenance manifest is committed as what it is, never as a symlink (git
    mode 120000). Committed as one, its entries live in the file the link names, whose later
    edits change no listing path, so PV201-PV203 never see a digest changed or an entry removed
    there. From the commit on, the link pins nothing; its entries are not also reported as
    removed (PV202).""",
    hint="commit the listing itself in place of the link",
)
