"""Type stubs of stratagraph._core (python/src/module.cc), with each call's contract.

Vertex IDs are non-negative integers below the store's max_vertex_id (2**36): internal IDs.
On a mapped store (DB.mapped: ingested by `strata ingest --ids map`, <store>/IDMODE says
ids=map) they are external IDs (any uint64), translated through <store>/IDDICT: every call
takes and returns external IDs, kernels return (ids, values) (ids: uint64 external IDs of the
vertices that exist, ascending; values aligned), and writes raise NotSupportedError. Arrays passed in
are 1-D buffers (numpy arrays of any integer dtype for IDs, float32/float64 for weights);
arrays returned are numpy arrays that own their memory. Every call that can take time
releases the GIL. Errors are stratagraph.Error subclasses carrying the C++ Status text.
"""

from types import TracebackType
from typing import Iterator, Literal, Optional, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

_Ids = npt.ArrayLike
_Direction = Literal["out", "in"]
_A = npt.NDArray
# A kernel's result: the dense array indexed by internal ID, or (ids, values) on a mapped store.
_Kernel = Union[_A, Tuple[npt.NDArray[np.uint64], _A]]

UNREACHABLE: int  # bfs depth of a vertex not reached (or absent): 2**63 - 1
NO_LABEL: int  # wcc / cdlp label of an absent vertex: 2**64 - 1
# ChangeFeed records' `kind` indexes this: "insert_edge", "overwrite_edge", "delete_edge",
# "add_vertex", "delete_vertex" (live), "put_edge", "delete_edge_op" (replayed from the WAL).
CHANGE_KINDS: list[str]

class Error(Exception): ...
class NotFoundError(Error): ...
class CorruptionError(Error): ...
class InvalidArgumentError(Error, ValueError): ...
class StorageIOError(Error, OSError): ...
class BusyError(Error): ...
class NotSupportedError(Error): ...
class AbortedError(Error): ...

class WriteBatch:
    """Updates applied atomically by DB.write, in the order added (later ops win)."""
    def __init__(self) -> None: ...
    def insert_edge(self, u: int, v: int, weight: float = 1.0) -> None: ...
    def delete_edge(self, u: int, v: int) -> None: ...
    def set_weight(self, u: int, v: int, weight: float) -> None: ...
    def add_vertex(self, v: int) -> None: ...
    def delete_vertex(self, v: int) -> None: ...
    def insert_edges(self, src: _Ids, dst: _Ids, weights: Optional[npt.ArrayLike] = None) -> None: ...
    def delete_edges(self, src: _Ids, dst: _Ids) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...

class EdgeIterator(Iterator[Tuple[np.ndarray, ...]]):
    def __iter__(self) -> "EdgeIterator": ...
    def __next__(self) -> Tuple[np.ndarray, ...]: ...

class ChangeFeed(Iterator[np.ndarray]):
    """A pull subscription (DB.subscribe). Chunks are numpy structured arrays with fields ts
    (uint64 commit timestamp), kind (uint8, CHANGE_KINDS), u, v (uint64; v is 0 for vertex
    records; external IDs on a mapped store), old_weight, new_weight (float64); records in
    commit order, a chunk never splits a batch. Waiting releases the GIL."""
    def __iter__(self) -> "ChangeFeed": ...
    def __next__(self) -> np.ndarray:
        """Waits (Ctrl-C interrupts) for records; StopIteration once closed or the DB closes;
        raises AbortedError after an overflow (overflow="cancel")."""
    def poll(self, max: int = 1 << 16, timeout: Optional[float] = None) -> np.ndarray:
        """At most about `max` records (whole batches); empty after `timeout` seconds."""
    def close(self) -> None: ...
    def __enter__(self) -> "ChangeFeed": ...
    def __exit__(self, t: Optional[type], v: Optional[BaseException], tb: Optional[TracebackType]) -> None: ...
    @property
    def delivered_ts(self) -> int: ...  # newest commit timestamp whose records poll returned
    @property
    def durable(self) -> bool: ...  # a name on a store with a WAL: the position persists

class Snapshot:
    """A consistent view at one commit: sees exactly the writes committed before it was taken."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> "Snapshot": ...
    def __exit__(self, t: Optional[type], v: Optional[BaseException], tb: Optional[TracebackType]) -> None: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def directed(self) -> bool: ...
    @property
    def kind(self) -> str: ...  # "directed", "directed+in-edges" or "undirected"
    @property
    def weighted(self) -> bool: ...
    @property
    def vertex_id_bound(self) -> int: ...  # every vertex ID is below it; kernel arrays' length
    @property
    def mapped(self) -> bool: ...  # the store maps external IDs (module docstring)
    @property
    def view(self) -> Optional[str]: ...  # the view it filters by (DB.snapshot(view=...))
    def num_vertices(self) -> int: ...
    def num_edges(self) -> int: ...  # stored directed entries: 2x the edges when undirected (a self-loop 1x)
    def has_vertex(self, v: int) -> bool: ...
    def has_edge(self, u: int, v: int) -> bool: ...
    def weight(self, u: int, v: int) -> Optional[float]: ...  # None when there is no edge
    def degree(self, v: int, direction: _Direction = "out") -> int: ...
    def degrees(self, direction: _Direction = "out") -> _Kernel: ...  # (ids, degrees) when mapped
    def vertices(self) -> npt.NDArray[np.uint64]: ...  # existing vertices, ascending (external IDs when mapped)
    @overload
    def neighbors(self, v: int, direction: _Direction = "out", weights: Literal[False] = False) -> npt.NDArray[np.uint64]: ...
    @overload
    def neighbors(self, v: int, direction: _Direction, weights: Literal[True]) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...
    @overload
    def neighbors(self, v: int, *, weights: Literal[True]) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...
    def edges(self, chunk_size: int = 1 << 20, weights: bool = False) -> EdgeIterator:
        """(src, dst) or (src, dst, weight) chunks of at most chunk_size edges, ascending by src:
        every edge once (undirected stores: each {u, v} once, as u <= v)."""
    # Kernels (analytics/): arrays indexed by vertex ID, of length vertex_id_bound; on a mapped
    # store (ids, values) instead, labels (wcc, cdlp) as external IDs. Unknown source on a
    # mapped store: NotFoundError "unknown vertex X".
    def bfs(self, source: int) -> _Kernel: ...  # int64 hops; UNREACHABLE if not reached
    def pagerank(self, damping: float = 0.85, iterations: int = 20,
                 cache_bytes: Optional[int] = None) -> _Kernel: ...  # float64
    def sssp(self, source: int, delta: float = 0.0) -> _Kernel: ...  # float64; inf: unreachable
    def wcc(self) -> _Kernel: ...  # uint64: smallest internal vertex ID of the component
    def cdlp(self, iterations: int = 10) -> _Kernel: ...  # uint64 (ties broken by internal ID)
    def lcc(self) -> _Kernel: ...  # float64
    def triangle_count(self) -> int: ...
    def khop(self, source: int, k: int = 2, direction: _Direction = "out") -> npt.NDArray[np.uint64]: ...  # ascending

class DB:
    """An open store. Closing closes the snapshots it handed out."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> "DB": ...
    def __exit__(self, t: Optional[type], v: Optional[BaseException], tb: Optional[TracebackType]) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def directed(self) -> bool: ...
    @property
    def kind(self) -> str: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def mapped(self) -> bool: ...  # IDMODE says ids=map: external IDs, writes NotSupportedError
    def insert_edges(self, src: _Ids, dst: _Ids, weights: Optional[npt.ArrayLike] = None, batch: int = 0, sync: bool = False) -> int:
        """One atomic batch (batch=0) or atomic batches of `batch` edges; returns edges written."""
    def delete_edges(self, src: _Ids, dst: _Ids, batch: int = 0, sync: bool = False) -> int: ...
    def add_vertices(self, ids: _Ids, sync: bool = False) -> int: ...
    def delete_vertices(self, ids: _Ids, sync: bool = False) -> int: ...
    def write(self, batch: WriteBatch, sync: bool = False) -> None: ...
    def snapshot(self, *, view: Optional[str] = None) -> Snapshot:
        """The whole store now, or view `view`'s subgraph now (NotFoundError: no such view)."""
    # Views (docs/views.md): named subgraphs stored in <store>/VIEWS. A filter view takes any
    # of vertices (IDs kept), edges=(src, dst) (only these edges) or exclude_edges=(src, dst)
    # (all but these), weight_range=(min, max) (inclusive); a set view exactly one of union,
    # intersection, difference (a list of >= 2 view names). IDs are external on mapped stores.
    def create_view(
        self,
        name: str,
        *,
        vertices: Optional[_Ids] = None,
        edges: Optional[Tuple[_Ids, _Ids]] = None,
        exclude_edges: Optional[Tuple[_Ids, _Ids]] = None,
        weight_range: Optional[Tuple[float, float]] = None,
        union: Optional[list[str]] = None,
        intersection: Optional[list[str]] = None,
        difference: Optional[list[str]] = None,
        replace: bool = False,
    ) -> None: ...
    def drop_view(self, name: str) -> None: ...  # InvalidArgumentError while another view uses it
    def views(self) -> list[dict[str, object]]: ...  # name, created, kind, operands, description
    # Change feed (docs/change-feed.md). name: durable (needs the WAL; NotSupportedError with
    # wal="off"), resumes after its committed position; None: in-memory, from now. from_ts:
    # records of commits with ts > from_ts (a past value replays the WAL).
    def subscribe(
        self,
        name: Optional[str] = None,
        *,
        from_ts: Optional[int] = None,
        queue_capacity: int = 1 << 20,
        overflow: Literal["cancel", "block"] = "cancel",
    ) -> ChangeFeed: ...
    def commit_position(self, name: str, ts: int) -> None: ...  # records with ts <= `ts` processed
    def position(self, name: str) -> Optional[int]: ...  # None: no such durable subscription
    def drop_subscription(self, name: str) -> None: ...
    def stats(self, count_graph: bool = True) -> dict[str, Union[int, str]]: ...
    def flush(self) -> None: ...
    def wait_idle(self) -> None: ...
    def compact(self) -> None: ...
    def verify(self) -> None: ...  # raises CorruptionError with one line per problem

def open(
    path: str,
    *,
    directed: bool = True,
    in_edges: bool = False,
    weighted: bool = False,
    memory_budget: Optional[int] = None,
    memgraph_bytes: Optional[int] = None,
    wal: Literal["off", "group", "sync"] = "group",
    in_memory: bool = False,
    read_only: bool = False,
    create: bool = True,
) -> DB: ...
