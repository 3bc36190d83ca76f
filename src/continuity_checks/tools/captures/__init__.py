"""``continuity capture``: manifests written, capture directories verified, captures read by
JSON Pointer with paging, cycle deltas diffed and applied (docs/capture-helper.md)."""
