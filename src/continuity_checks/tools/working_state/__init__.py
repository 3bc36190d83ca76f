"""``continuity state``: a WORKING_STATE's ``state_hash`` and DSH's bounded projection."""
