"""The graph algorithms on their own: cycle search and transitive dependent counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from colibri.domains.tasks.graph import cycle_through, transitive_dependent_counts


class Reader:
    """Serves dependents from a dict and remembers every batch it was asked for."""

    def __init__(self, dependents: Mapping[str, Sequence[str]]) -> None:
        self.dependents = dependents
        self.reads: list[list[str]] = []

    def __call__(self, ids: list[str]) -> Mapping[str, Sequence[str]]:
        self.reads.append(list(ids))
        return {node: self.dependents[node] for node in ids if node in self.dependents}


def test_no_dependents_costs_one_read_and_finds_nothing() -> None:
    read = Reader({})
    assert cycle_through("T-9", ["T-1", "T-2"], read) is None
    assert read.reads == [["T-9"]]


def test_self_dependency_needs_no_read() -> None:
    read = Reader({})
    assert cycle_through("T-1", ["T-2", "T-1"], read) == ["T-1", "T-1"]
    assert read.reads == []


def test_cycle_path_reads_as_depends_on() -> None:
    # T-2 depends on T-1, T-3 on T-2: T-1 -> T-3 closes T-1 → T-3 → T-2 → T-1.
    read = Reader({"T-1": ["T-2"], "T-2": ["T-3"]})
    assert cycle_through("T-1", ["T-3"], read) == ["T-1", "T-3", "T-2", "T-1"]
    assert read.reads == [["T-1"], ["T-2"]]


def brute_force_counts(depends_on: list[list[int]]) -> list[int]:
    counts = []
    for node in range(len(depends_on)):
        seen: set[int] = set()
        frontier = [node]
        while frontier:
            current = frontier.pop()
            for source, deps in enumerate(depends_on):
                if current in deps and source not in seen:
                    seen.add(source)
                    frontier.append(source)
        seen.discard(node)
        counts.append(len(seen))
    return counts


def test_counts_on_a_known_graph() -> None:
    #   0 <- 1 <- 3
    #   0 <- 2 <- 3 <- 4      (3 depends on 1 and 2; 4 on 3)   5 alone
    depends_on = [[], [0], [0], [1, 2], [3], []]
    assert transitive_dependent_counts(depends_on) == [4, 2, 2, 1, 0, 0]


@st.composite
def dags(draw: st.DrawFn) -> list[list[int]]:
    n = draw(st.integers(min_value=0, max_value=25))
    graph: list[list[int]] = []
    for node in range(n):
        deps = draw(st.lists(st.integers(min_value=0, max_value=max(node - 1, 0)), max_size=4, unique=True))
        graph.append([dep for dep in deps if dep < node])
    return graph


@settings(max_examples=150, deadline=None)
@given(dags())
def test_counts_match_a_brute_force_search(depends_on: list[list[int]]) -> None:
    assert transitive_dependent_counts(depends_on) == brute_force_counts(depends_on)


def test_a_cycle_in_stored_data_is_still_counted_correctly() -> None:
    # 0 -> 1 -> 2 -> 0 (hand-edited data), and 3 depends on 0.
    depends_on = [[1], [2], [0], [0]]
    assert transitive_dependent_counts(depends_on) == brute_force_counts(depends_on) == [3, 3, 3, 0]
