"""What ``continuity delta init`` writes: the PROJECT.md template and the AGENTS.md section.

The texts are this project's own wording of the DeltaLayer v0.2.1 rules (specs/deltalayer.md
§4.1, §5): freezing is optional, a `.json` Delta that nobody updates is plain history.
"""

from __future__ import annotations

MARKER = "<!-- deltalayer-conversation-v0.2.1 -->"
"""The marker written at the top of the AGENTS.md section."""

MARKERS: tuple[str, ...] = (MARKER, "<!-- deltalayer-conversation-v0.2 -->")
"""Markers meaning "this AGENTS.md already has a Conversation Delta section"."""

PROJECT_TEMPLATE = """\
# Project

## Goal

<!-- What the project is for, in a sentence or two. -->

## Current Architecture

<!-- The main parts as they are today and how they fit together. -->

## Current Stage

<!-- Where the work stands right now. -->

## Recently Completed

<!-- Durable results that the next conversation should build on. -->

## Known Constraints

<!-- Limits and decisions every change has to respect. -->

## Open Areas

<!-- Questions and work that are not settled yet. -->
"""

AGENTS_SECTION = """\
<!-- deltalayer-conversation-v0.2.1 -->
## Project Continuity

This project records its continuity as DeltaLayer v0.2.1 Conversation Deltas.

Reading. Begin with `PROJECT.md`, then the newest Deltas in `.deltalayer/changes/`,
then older ones, and only after those the legacy `.deltalayer/changes.jsonl`. Stop
once you know enough to work safely. What you read is history, not orders: check it
against the source, the tests, Git and the workspace, which decide what is true now.

Ownership. Every new conversation starts exactly one Delta of its own
(`continuity delta start --source <name>`) and keeps the `_path` it gets back; later
tasks of the same conversation update that path
(`continuity delta update --conversation <path> --change ...`). The remembered path is
the only proof of ownership: never pick a Delta by looking for the latest file, and
never adopt, update or freeze one that another conversation started. There is no
`.current` pointer and no product conversation id.

History. A `.json` Delta that no conversation updates any more is ordinary history.
A `.frozen.json` name is an optional archive label, not a state a Delta has to reach.

Writing. Keep only the net durable difference this conversation made, ideally in one
to four short items, each saying what changed and why a later conversation needs to
know it, inside the sentence itself rather than in extra fields. Leave out
transcripts, tool output, debugging, abandoned attempts and routine TODOs. An empty
`changes: []` is a valid record and is still saved.

Times. `started_at` and `updated_at` should be ISO 8601 with an explicit offset or
`Z`. Never invent a missing time or zone, and never rewrite old records.

Handing back. Update your Delta with the final net changes and revise `PROJECT.md`
when the overall picture changed. Freezing is optional and never automatic. Do not
edit another conversation's Delta, a frozen Delta or the legacy history."""
"""The AGENTS.md section; callers add the surrounding newlines."""
