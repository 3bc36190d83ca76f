"""``continuity provenance add``: files listed in a SHA256SUMS-style file."""
