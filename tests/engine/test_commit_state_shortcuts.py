"""The state a commit leaves with the history code's shortcuts, held to the work they replace
(see ``test_commit_state_oracle``'s last section): a store of deltas made and taken away beside
AGENTS.md (``Family.dependents_between``), and deltas added beside their twin and without
PROJECT.md (``Family.tree_may_find``), judged alike with the shortcuts and without them."""

from __future__ import annotations

import pytest

from tests.helpers.git import GitRepo, delta, path_of
from tests.helpers.shortcuts import both_ways, rules

MARKED = "<!-- deltalayer-conversation-v0.2.1 -->\n"


@pytest.mark.parametrize("agents", ["# agents\n", MARKED * 2, MARKED])
def test_a_store_made_and_taken_away_beside_agents_md(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, agents: str
) -> None:
    first = path_of("2026-09-21T16-20-00p08-00--agent.json")
    second = path_of("2026-09-22T10-00-00p08-00--agent.json")
    nested = f"sub/{first}"
    base = repo.commit(
        "a project without a store",
        {
            ".continuity.toml": '[rules]\nDL130 = "error"\nDL131 = "error"\n',
            "PROJECT.md": "# project\n",
            "AGENTS.md": agents,
            "sub/AGENTS.md": agents,
        },
    )
    repo.commit("the first delta makes the store", {first: delta()})
    repo.commit("a second delta", {second: delta(started="2026-09-22T10:00:00+08:00")})
    repo.commit(
        "one delta edited", {second: delta(started="2026-09-22T10:00:00+08:00", changes=["x"])}
    )
    repo.commit("the store taken away", delete=[first, second])
    repo.commit("a legacy history makes it again", {".deltalayer/changes.jsonl": ""})
    repo.commit("a delta beside it", {first: delta()})
    repo.commit("a delta frozen beside itself", {first.replace(".json", ".frozen.json"): delta()})
    repo.commit("PROJECT.md taken away", delete=["PROJECT.md"])
    repo.commit("a delta added without PROJECT.md", {second: delta(changes=["again"])})
    repo.commit("PROJECT.md back", {"PROJECT.md": "# project\n"})
    repo.commit("a store in a subdirectory", {nested: delta()})
    repo.commit("the store and AGENTS.md taken away", delete=[nested, "sub/AGENTS.md"])
    repo.write({nested: delta()})
    repo.git("add", "-A")
    fast, slow = both_ways(monkeypatch, "check", "--staged", nested)
    assert fast == slow
    repo.git("commit", "-q", "--no-verify", "-m", "a store in the subdirectory again")
    fast, slow = both_ways(monkeypatch, "verify", "--range", f"{base}..HEAD")
    assert fast == slow
    if agents != MARKED:
        assert "DL130" in rules(fast) or "DL132" in rules(fast)
