"""The dependency graph of the cards on the board, laid out by the server as SVG coordinates.

Layers by longest path: a task sits one layer right of the deepest of its dependencies shown,
so every edge points rightwards; within a layer tasks keep their creation order. Only the
edges between tasks shown are drawn (a page of each column), so the cost follows the page.
"""

from __future__ import annotations

from dataclasses import dataclass

from colibri.domains.tasks.models import Task

NODE_W = 150
NODE_H = 34
GAP_X = 60
GAP_Y = 14
MARGIN = 10


@dataclass(frozen=True, slots=True)
class Node:
    task: Task
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Edge:
    source: str  # the dependency
    target: str  # the task that waits on it
    x1: int
    y1: int
    x2: int
    y2: int


@dataclass(frozen=True, slots=True)
class Graph:
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int


def lay_out(tasks: list[Task]) -> Graph:
    """Coordinates for the tasks that take part in a dependency among `tasks`."""
    by_id = {task.id: task for task in tasks}
    pairs = [(dep, task.id) for task in tasks for dep in task.depends_on if dep in by_id]
    involved = {name for pair in pairs for name in pair}
    layer: dict[str, int] = {}
    for task_id in sorted(involved, key=_number):
        _layer_of(task_id, by_id, involved, layer, set())
    rows: dict[int, int] = {}
    nodes: dict[str, Node] = {}
    for task_id in sorted(involved, key=lambda name: (layer[name], _number(name))):
        column = layer[task_id]
        row = rows.get(column, 0)
        rows[column] = row + 1
        x = MARGIN + column * (NODE_W + GAP_X)
        y = MARGIN + row * (NODE_H + GAP_Y)
        nodes[task_id] = Node(by_id[task_id], x, y)
    edges = [
        Edge(
            dep,
            target,
            nodes[dep].x + NODE_W,
            nodes[dep].y + NODE_H // 2,
            nodes[target].x,
            nodes[target].y + NODE_H // 2,
        )
        for dep, target in pairs
    ]
    width = MARGIN * 2 + (max(layer.values(), default=-1) + 1) * (NODE_W + GAP_X)
    height = MARGIN * 2 + max(rows.values(), default=0) * (NODE_H + GAP_Y)
    return Graph(list(nodes.values()), edges, width, height)


def _layer_of(
    task_id: str, by_id: dict[str, Task], involved: set[str], layer: dict[str, int], seen: set[str]
) -> int:
    if task_id in layer:
        return layer[task_id]
    if task_id in seen:  # a cycle cannot be stored (task_update refuses it); stay finite anyway
        return 0
    seen.add(task_id)
    deps = [dep for dep in by_id[task_id].depends_on if dep in involved]
    value = 1 + max((_layer_of(dep, by_id, involved, layer, seen) for dep in deps), default=-1)
    layer[task_id] = value
    return value


def _number(task_id: str) -> int:
    return int(task_id.removeprefix("T-")) if task_id.removeprefix("T-").isdigit() else 0
