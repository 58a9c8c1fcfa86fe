"""StrataGraph from Python: a disk-backed dynamic graph store with numpy arrays in and out.

    import numpy as np, stratagraph
    with stratagraph.open("/tmp/g", directed=True) as db:
        db.insert_edges(np.array([0, 1]), np.array([1, 2]))
        with db.snapshot() as snap:
            rank = snap.pagerank()

docs/python.md is the guide; _core.pyi lists every call with its contract.
"""

from stratagraph._core import (
    CHANGE_KINDS,
    DB,
    NO_LABEL,
    UNREACHABLE,
    AbortedError,
    BusyError,
    ChangeFeed,
    CorruptionError,
    EdgeIterator,
    Error,
    InvalidArgumentError,
    NotFoundError,
    NotSupportedError,
    Snapshot,
    StorageIOError,
    WriteBatch,
    open,
)
from stratagraph._networkx import from_networkx, to_networkx

__all__ = [
    "CHANGE_KINDS",
    "DB",
    "NO_LABEL",
    "UNREACHABLE",
    "AbortedError",
    "BusyError",
    "ChangeFeed",
    "CorruptionError",
    "EdgeIterator",
    "Error",
    "InvalidArgumentError",
    "NotFoundError",
    "NotSupportedError",
    "Snapshot",
    "StorageIOError",
    "WriteBatch",
    "from_networkx",
    "open",
    "to_networkx",
]
