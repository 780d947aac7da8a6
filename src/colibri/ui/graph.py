"""The dependency graph of the cards on the board, laid out by the server as SVG coordinates.

Layers by longest path: a task sits one column right of the deepest of its dependencies shown,
so every edge points rightwards. An edge that skips columns is routed through a lane of its own
in each column it crosses (a slot no box takes, as in Sugiyama's layered drawing), so no edge is
drawn through a box: between columns an edge is a curve inside the gap, where there are no
boxes, and inside a column it runs level along its lane. Within a column, tasks and lanes are
ordered by the mean row of what leads into them, which keeps most edges short and uncrossed.
Titles are wrapped at word boundaries into two lines, an ellipsis marking what did not fit.
Only the edges between tasks shown are drawn (a page of each column), so the cost follows the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from statistics import fmean

from colibri.domains.tasks.models import Task
from colibri.ui.wrap import wrap_words

NODE_W = 170
NODE_H = 52
LANE_H = 14  # the height of the slot an edge takes in a column it crosses
GAP_X = 70
GAP_Y = 14
MARGIN = 10
TITLE_LINES = 2
TEXT_W = NODE_W - 16  # pixels of text in a box


@dataclass(frozen=True, slots=True)
class Node:
    task: Task
    x: int
    y: int
    title_lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Edge:
    source: str  # the dependency
    target: str  # the task that waits on it
    points: tuple[tuple[int, int], ...]  # leaves the source's right side, ends at the target's left

    @property
    def path(self) -> str:
        """SVG path data: curves across the gaps between columns, level lines along lanes."""
        x, y = self.points[0]
        parts = [f"M {x} {y}"]
        for (x1, y1), (x2, y2) in pairwise(self.points):
            if y1 == y2 or x2 - x1 <= 0:
                parts.append(f"L {x2} {y2}")
            else:
                middle = (x1 + x2) / 2
                parts.append(f"C {middle:g} {y1} {middle:g} {y2} {x2} {y2}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Graph:
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int
    node_width: int = NODE_W
    node_height: int = NODE_H


Item = tuple[str, int]  # ("T-3", -1) for a task; ("T-1>T-3", column) for that edge's lane in a column


def lay_out(tasks: list[Task]) -> Graph:
    """Coordinates for the tasks that take part in a dependency among `tasks`."""
    by_id = {task.id: task for task in tasks}
    pairs = [(dep, task.id) for task in tasks for dep in task.depends_on if dep in by_id]
    involved = {name for pair in pairs for name in pair}
    layer: dict[str, int] = {}
    for task_id in sorted(involved, key=_number):
        _layer_of(task_id, by_id, involved, layer, set())
    columns, chains = _columns(pairs, layer)
    slots = _slots(columns)
    nodes = [
        Node(by_id[name], *slots[(name, -1)], wrap_words(by_id[name].title, TEXT_W, TITLE_LINES))
        for column in columns
        for name, edge in column
        if edge < 0
    ]
    edges = [_edge(dep, target, chain, slots) for (dep, target), chain in zip(pairs, chains, strict=True)]
    width = MARGIN * 2 + len(columns) * NODE_W + max(len(columns) - 1, 0) * GAP_X
    height = MARGIN * 2 + max((_column_height(column) for column in columns), default=0)
    return Graph(nodes, edges, width, height)


def _columns(
    pairs: list[tuple[str, str]], layer: dict[str, int]
) -> tuple[list[list[Item]], list[list[Item]]]:
    """The items of each column in drawing order, and each edge's lanes (one per column it skips)."""
    columns: list[list[Item]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    leads_into: dict[Item, list[Item]] = {}
    for name in sorted(layer, key=_number):
        columns[layer[name]].append((name, -1))
    chains: list[list[Item]] = []
    for dep, target in pairs:
        chain: list[Item] = []
        before: Item = (dep, -1)
        for column in range(layer[dep] + 1, layer[target]):
            lane = (f"{dep}>{target}", column)
            columns[column].append(lane)
            leads_into[lane] = [before]
            chain.append(lane)
            before = lane
        leads_into.setdefault((target, -1), []).append(before)
        chains.append(chain)
    rows: dict[Item, int] = {item: row for row, item in enumerate(columns[0])} if columns else {}
    for items in columns[1:]:
        items.sort(key=lambda item: fmean(rows[lead] for lead in leads_into[item]))
        rows.update({item: row for row, item in enumerate(items)})
    return columns, chains


def _slots(columns: list[list[Item]]) -> dict[Item, tuple[int, int]]:
    """The top left corner of every item's slot."""
    slots: dict[Item, tuple[int, int]] = {}
    for number, column in enumerate(columns):
        x, y = MARGIN + number * (NODE_W + GAP_X), MARGIN
        for item in column:
            slots[item] = (x, y)
            y += (NODE_H if item[1] < 0 else LANE_H) + GAP_Y
    return slots


def _edge(dep: str, target: str, chain: list[Item], slots: dict[Item, tuple[int, int]]) -> Edge:
    x, y = slots[(dep, -1)]
    points = [(x + NODE_W, y + NODE_H // 2)]
    for lane in chain:
        lane_x, lane_y = slots[lane]
        points += [(lane_x, lane_y + LANE_H // 2), (lane_x + NODE_W, lane_y + LANE_H // 2)]
    x, y = slots[(target, -1)]
    points.append((x, y + NODE_H // 2))
    return Edge(dep, target, tuple(points))


def _column_height(column: list[Item]) -> int:
    return sum((NODE_H if edge < 0 else LANE_H) + GAP_Y for _, edge in column) - GAP_Y


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
