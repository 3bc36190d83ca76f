"""CC rules: what can be wrong with any file before a family looks at its meaning."""

from continuity_checks.core.findings import Severity
from continuity_checks.core.rules import rule

UNREADABLE = rule(
    "CC001",
    "core",
    "file cannot be read",
    """The file could not be opened or read (permissions, a dangling symlink, a directory where a
    file was expected, a symlink that leads outside the checked root). Nothing else about it can be
    checked.""",
    hint="make the path a regular file inside the repository",
)
INVALID_UTF8 = rule(
    "CC002",
    "core",
    "file is not valid UTF-8",
    """Continuity files are UTF-8 text. A byte sequence that is not UTF-8 makes every reader that
    decodes strictly (as DeltaLayer does) skip the whole record.""",
    hint="re-save the file as UTF-8",
)
BOM = rule(
    "CC003",
    "core",
    "file starts with a UTF-8 byte order mark",
    """A byte order mark before the JSON makes strict readers fail: DeltaLayer's reader skips such a
    delta as unreadable.""",
    hint="remove the three bytes EF BB BF at the start of the file",
)
SYNTAX = rule(
    "CC004",
    "core",
    "invalid JSON",
    """The text is not JSON as RFC 8259 defines it: a missing comma or quote, a trailing comma, a
    comment, an unescaped control character, or text after the value.""",
    hint="fix the JSON at the position shown",
)
DUPLICATE_KEY = rule(
    "CC005",
    "core",
    "duplicate key in a JSON object",
    """An object names the same key twice. JSON parsers disagree on which value wins, so two tools
    can read two different records from the same bytes.""",
    hint="keep one of the two keys",
)
NON_STANDARD_NUMBER = rule(
    "CC006",
    "core",
    "NaN, Infinity or a number beyond a double in JSON",
    """NaN, Infinity and -Infinity are not JSON. Python writes them by default, other parsers
    reject them. A number too large for a double (such as 1e400) is read as infinity and written
    back as Infinity by the next tool that saves the file, so it is reported too.""",
    hint="write a finite number or null",
)
TOO_DEEP = rule(
    "CC007",
    "core",
    "JSON nested deeper than the limit",
    """The document nests arrays and objects deeper than the configured limit
    (limits.max-depth, default 64). No continuity format needs that depth; such input is a mistake
    or an attack on the reader.""",
    hint="flatten the document, or raise [tool.continuity.limits] max-depth",
)
TOO_LARGE = rule(
    "CC008",
    "core",
    "file larger than the size limit",
    """The file is larger than the configured limit (limits.max-file-bytes, default 16 MiB).
    It is not read.""",
    hint="split the file, or raise [tool.continuity.limits] max-file-bytes",
)
LONE_SURROGATE = rule(
    "CC009",
    "core",
    "string holds an unpaired UTF-16 surrogate escape",
    """A \\uD800-\\uDFFF escape without its pair decodes to no character; such a string cannot be
    written as UTF-8 and strict readers reject it. Files whose writer is JavaScript (DSH working
    state: JSON.stringify writes a cut character so) accept it; see WS120.""",
    hint="escape the whole character (both surrogates) or write it as UTF-8",
)
OUTSIDE_ROOT = rule(
    "CC010",
    "core",
    "path leads outside the root",
    """A path named inside a continuity file (a manifest entry, a pointer to another record, a
    trailer) is absolute, climbs out of the repository with "..", or uses "\\" separators. The
    tool never reads outside the root, so the file it names cannot be checked.""",
    hint="name the file by its path relative to the repository root, with / separators",
)
CONFIG_CHANGED = rule(
    "CC011",
    "core",
    "the configuration changes inside the verified range",
    """A commit of the range changes .continuity.toml or the [tool.continuity] table of
    pyproject.toml. continuity verify judges a range by the configuration at its base (the
    defaults for a range with no base: all of history), never by one the range brings, which
    the finding names: otherwise a commit could switch off the rule it breaks (DL207 = "off")
    or exclude the file it rewrites. The change is reported so that a reviewer sees it; it takes
    effect for the ranges that start after it. A commit that makes .continuity-baseline.json
    know more findings is reported the same way: continuity check reads the work tree's
    baseline, so the findings it adds are hidden there; one that only drops fixed findings is
    not reported.""",
    severity=Severity.WARNING,
    hint="review the configuration change; it applies once it is part of the base",
)
LOOK_BACK_CUT = rule(
    "CC012",
    "core",
    "no good earlier version within the look-back",
    """The commit hook compares a changed file with its last good version: the newest earlier
    version that parsed and passed. When the version in HEAD is not good (it does not parse, holds
    an error, or the file was deleted), it looks further back through the commits that changed
    the file, up to a bound. When none of those versions is good, the history rules had nothing
    to compare the file with: this warning says so. continuity verify over the range, which
    remembers every version it walks, compares it as far back as the range goes.""",
    severity=Severity.WARNING,
    hint="run `continuity verify` over the history of the file, which is not bounded",
)
