"""Graph algorithms over `depends_on` edges (an edge a → b reads "a depends on b").

Two questions: would new edges close a cycle (and which one), and how many tasks wait on
each task directly or transitively. Both work on plain ids or indices; the database reads
are passed in, so the algorithms are tested without SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

# Given a batch of tasks, the tasks that depend on each directly (tasks with none may be absent).
DependentReader = Callable[[list[str]], Mapping[str, Sequence[str]]]


def cycle_through(task_id: str, depends_on: Sequence[str], read: DependentReader) -> list[str] | None:
    """The cycle that giving `task_id` these dependencies would close, as `[task_id, ..., task_id]`,
    or None.

    A new edge task → dep closes a cycle exactly when dep already waits on task, directly or
    not. So the search walks from `task_id` to its dependents, breadth first (one read per
    level; the cycle reported is a shortest one), until it meets one of the new dependencies.
    A task that nothing depends on yet, such as a new one, costs a single read.
    """
    targets = set(depends_on)
    if task_id in targets:
        return [task_id, task_id]
    parent: dict[str, str | None] = {task_id: None}
    frontier = [task_id]
    while frontier:
        edges = read(frontier)
        following: list[str] = []
        for node in frontier:
            for dependent in edges.get(node, ()):
                if dependent in parent:
                    continue
                parent[dependent] = node
                if dependent in targets:
                    # parent links lead back to task_id through tasks that each depend on the next.
                    return [task_id, *_path_back(dependent, parent)]
                following.append(dependent)
        frontier = following
    return None


def _path_back(node: str, parent: Mapping[str, str | None]) -> list[str]:
    """node, its parent, ..., the root: read left to right, each one depends on the next."""
    path = [node]
    step = parent[node]
    while step is not None:
        path.append(step)
        step = parent[step]
    return path


def transitive_dependent_counts(depends_on: Sequence[Sequence[int]]) -> list[int]:
    """For nodes 0..n-1 with `depends_on[i]` the nodes i depends on: how many distinct nodes depend
    on each node, directly or through others.

    Each node's set of dependents is a bitset (a Python int), built once all of that node's
    dependents are known (Kahn's order on the reversed edges), so the work is one OR per edge.
    """
    n = len(depends_on)
    remaining = [0] * n  # dependents of each node not yet visited
    for deps in depends_on:
        for dep in deps:
            remaining[dep] += 1
    ready = [node for node in range(n) if remaining[node] == 0]
    reach = [0] * n
    counts = [0] * n
    visited = 0
    while ready:
        node = ready.pop()
        visited += 1
        mine = reach[node]
        counts[node] = mine.bit_count()
        reach[node] = 0  # no longer needed: free the memory early
        mine |= 1 << node
        for dep in depends_on[node]:
            reach[dep] |= mine
            remaining[dep] -= 1
            if remaining[dep] == 0:
                ready.append(dep)
    if visited < n:
        # Only a database edited by hand can hold a cycle; count those nodes the slow way.
        stuck = [node for node in range(n) if remaining[node] > 0]
        for node, count in zip(stuck, _count_dependents(stuck, depends_on), strict=True):
            counts[node] = count
    return counts


def _count_dependents(nodes: Sequence[int], depends_on: Sequence[Sequence[int]]) -> list[int]:
    """Plain graph search per node: correct on any graph, cycles included."""
    dependents: list[list[int]] = [[] for _ in depends_on]
    for source, deps in enumerate(depends_on):
        for dep in deps:
            dependents[dep].append(source)
    counts = []
    for node in nodes:
        seen = {node}
        stack = [node]
        while stack:
            for source in dependents[stack.pop()]:
                if source not in seen:
                    seen.add(source)
                    stack.append(source)
        counts.append(len(seen) - 1)
    return counts
