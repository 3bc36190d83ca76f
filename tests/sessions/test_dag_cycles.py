"""The cycle search of a session's DAG (``dag._cycles``) against the plain search it replaced:
the same cycles, each once, in the same order and from the same node, on random graphs where
each node has at most one outgoing edge."""

from __future__ import annotations

import random

from continuity_checks.checks.sessions.dag import _cycles


def _reference(edges: dict[str, str]) -> list[list[str]]:
    """Each walk from a node not yet reached keeps its own path; a cycle is the part of the
    path from the node the walk reaches twice."""
    done: set[str] = set()
    cycles = []
    for start in edges:
        if start in done:
            continue
        order: dict[str, int] = {}
        path: list[str] = []
        node: str | None = start
        while node is not None and node not in done and node not in order:
            order[node] = len(path)
            path.append(node)
            node = edges.get(node)
        if node is not None and node in order:
            cycles.append(path[order[node] :])
        done.update(path)
    return cycles


def test_the_cycle_search_agrees_with_the_plain_search_on_random_graphs() -> None:
    rng = random.Random(20261202)
    for _ in range(2000):
        size = rng.randint(1, 12)
        names = [f"n{i}" for i in range(size)]
        # edges to nodes of the graph, to nodes outside it (dangling) and to themselves
        targets = [*names, "elsewhere", "ROOT"]
        edges = {n: rng.choice(targets) for n in names if rng.random() < 0.85}
        keys = list(edges)
        rng.shuffle(keys)
        edges = {k: edges[k] for k in keys}
        assert _cycles(edges) == _reference(edges), edges


def test_a_chain_has_no_cycle_and_a_loop_is_reported_once_from_where_it_is_entered() -> None:
    assert _cycles({"c": "b", "b": "a", "a": "ROOT"}) == []
    assert _cycles({"x": "a", "a": "b", "b": "c", "c": "a"}) == [["a", "b", "c"]]
    assert _cycles({"a": "a"}) == [["a"]]
