"""The dependency graph's layout: no edge through a box, on any graph; titles cut only between words."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from colibri.domains.tasks.models import Task
from colibri.ui.graph import NODE_H, NODE_W, TEXT_W, Edge, Graph, lay_out
from colibri.ui.wrap import ELLIPSIS, text_width, wrap_words

INSET = 0.5  # a point this far inside a box's edge is inside it


def _task(number: int, depends_on: list[int], title: str = "a task") -> Task:
    return Task(
        id=f"T-{number}",
        title=title,
        description="",
        status="todo",
        priority="medium",
        depends_on=[f"T-{dep}" for dep in depends_on],
        tags=[],
        assignee=None,
        created_at="2026-01-01T00:00:00.000000Z",
        updated_at="2026-01-01T00:00:00.000000Z",
        version=1,
    )


def _samples(edge: Edge, steps: int = 40) -> list[tuple[float, float]]:
    """Points along the edge as its SVG path draws it: cubic curves across gaps, lines along lanes."""
    points = []
    for (x1, y1), (x2, y2) in pairwise(edge.points):
        middle = (x1 + x2) / 2
        for n in range(steps + 1):
            t = n / steps
            if y1 == y2:
                points.append((x1 + (x2 - x1) * t, float(y1)))
            else:  # C middle y1, middle y2, x2 y2
                u = 1 - t
                x = u**3 * x1 + 3 * u * u * t * middle + 3 * u * t * t * middle + t**3 * x2
                y = u**3 * y1 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t**3 * y2
                points.append((x, y))
    return points


def _through_boxes(graph: Graph) -> list[str]:
    hits = []
    for edge in graph.edges:
        for x, y in _samples(edge):
            for node in graph.nodes:
                inside_x = node.x + INSET < x < node.x + NODE_W - INSET
                if inside_x and node.y + INSET < y < node.y + NODE_H - INSET:
                    hits.append(f"{edge.source}->{edge.target} through {node.task.id}")
    return sorted(set(hits))


def test_an_edge_that_skips_a_column_goes_round_the_box_in_it() -> None:
    # T-3 waits on T-1 and T-2, T-2 on T-1: a straight T-1 -> T-3 would cross T-2's box.
    graph = lay_out([_task(1, []), _task(2, [1]), _task(3, [1, 2])])
    assert _through_boxes(graph) == []
    skipping = next(edge for edge in graph.edges if (edge.source, edge.target) == ("T-1", "T-3"))
    assert len(skipping.points) == 4  # out of T-1, along its lane through T-2's column, into T-3
    assert skipping.path.startswith("M ") and " C " in skipping.path


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(min_value=1, max_value=40), max_size=4), min_size=2, max_size=25))
def test_no_edge_crosses_a_box_on_any_graph(wanted: list[list[int]]) -> None:
    tasks = [_task(n, sorted({dep for dep in deps if dep < n})) for n, deps in enumerate(wanted, start=1)]
    graph = lay_out(tasks)
    assert _through_boxes(graph) == []
    boxes = sorted((node.x, node.y) for node in graph.nodes)
    for (x1, y1), (x2, y2) in pairwise(boxes):
        assert x1 != x2 or y2 >= y1 + NODE_H, "two boxes overlap"
    assert all(node.x + NODE_W <= graph.width and node.y + NODE_H <= graph.height for node in graph.nodes)


def test_titles_are_wrapped_between_words_with_an_ellipsis_for_the_rest() -> None:
    title = "Write the migrations for every table of the new schema and then some more"
    lines = wrap_words(title, TEXT_W, 2)
    assert len(lines) == 2 and lines[-1].endswith(ELLIPSIS)
    shown = " ".join(lines).removesuffix(ELLIPSIS).split()
    assert shown == title.split()[: len(shown)]
    assert all(text_width(line) <= TEXT_W for line in lines)
    assert wrap_words("Review docs", TEXT_W, 2) == ("Review docs",)
    assert wrap_words("", TEXT_W, 2) == ()
    # A word wider than a whole line is the one thing cut inside, and the ellipsis says so.
    (only,) = wrap_words("x" * 80, TEXT_W, 1)
    assert only.endswith(ELLIPSIS) and text_width(only) <= TEXT_W
    node = lay_out([_task(1, [], title), _task(2, [1])]).nodes[0]
    assert node.title_lines == lines
