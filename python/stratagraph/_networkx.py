"""NetworkX interop for graphs that fit in memory: to_networkx and from_networkx.

networkx is imported on first use, so the package does not need it otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stratagraph import _core


def to_networkx(snapshot: _core.Snapshot, weight: str = "weight") -> Any:
    """Returns the snapshot's graph as a networkx.DiGraph (directed stores) or Graph.

    Every existing vertex becomes a node (isolated ones too), every edge an edge; on a
    weighted store each edge carries its weight under the attribute `weight`.
    """
    import networkx as nx

    g = nx.DiGraph() if snapshot.directed else nx.Graph()
    g.add_nodes_from(snapshot.vertices().tolist())
    if snapshot.weighted:
        for src, dst, w in snapshot.edges(weights=True):
            g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()), weight=weight)
    else:
        for src, dst in snapshot.edges():
            g.add_edges_from(zip(src.tolist(), dst.tolist()))
    return g


def from_networkx(
    graph: Any,
    path: str,
    *,
    weighted: bool | None = None,
    weight: str = "weight",
    **open_args: Any,
) -> _core.DB:
    """Creates a store at `path` holding `graph` and returns it open.

    Nodes must be non-negative integers (networkx.convert_node_labels_to_integers relabels
    others); each node becomes a vertex, isolated ones too. directed follows
    graph.is_directed(). weighted=None stores weights when some edge has the attribute
    `weight` (edges without it get 1.0). Everything is written in one atomic batch. Further
    keyword arguments go to stratagraph.open; the store must not exist yet.
    """
    nodes = np.fromiter(graph.nodes, dtype=object, count=graph.number_of_nodes())
    if not all(isinstance(n, (int, np.integer)) and n >= 0 for n in nodes):
        raise _core.InvalidArgumentError(
            "from_networkx: node labels must be non-negative integers "
            "(networkx.convert_node_labels_to_integers relabels them)"
        )
    m = graph.number_of_edges()
    src = np.empty(m, dtype=np.uint64)
    dst = np.empty(m, dtype=np.uint64)
    w = np.ones(m, dtype=np.float64)
    has_weight = False
    for i, (u, v, data) in enumerate(graph.edges(data=True)):
        src[i] = u
        dst[i] = v
        if weight in data:
            w[i] = data[weight]
            has_weight = True
    if weighted is None:
        weighted = has_weight
    db = _core.open(path, directed=graph.is_directed(), weighted=weighted, **open_args)
    try:
        with db.snapshot() as snap:
            empty = snap.num_vertices() == 0
        if not empty:
            raise _core.InvalidArgumentError(f"from_networkx: the store at {path!r} is not empty")
        batch = _core.WriteBatch()
        for n in nodes.tolist():
            batch.add_vertex(n)
        batch.insert_edges(src, dst, w if weighted else None)
        db.write(batch)
    except BaseException:
        db.close()
        raise
    return db
