"""The shape of the code (SPEC §8): layers that only import downward, small modules, one driver edge.

Every import in src/colibri is read, wherever it sits (inside functions and TYPE_CHECKING
blocks too), so a lazy import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "colibri"

# Lowest first. A module may import its own package and any package of a lower layer, never one
# of its own layer or above. `colibri` is the package root (it holds only __version__).
LAYERS: list[frozenset[str]] = [
    frozenset({"colibri"}),
    frozenset({"core"}),
    frozenset({"storage"}),
    frozenset({"domains"}),
    frozenset({"tools"}),
    frozenset({"chain"}),
    frozenset({"pipes"}),
    frozenset({"serving"}),
    frozenset({"runtime", "verifier", "switchboard", "client", "ui", "witness"}),
    frozenset({"cli"}),
    frozenset({"__main__"}),
]
# The switchboard is its own program: it shares the transports and the bottom layer, nothing else.
SWITCHBOARD_MAY_IMPORT = frozenset({"colibri", "core", "pipes", "serving", "switchboard"})
MAX_LINES = 300
# The only code that may talk to the SQLite driver: the backend, and the offline verifier,
# which reads a file with its own read-only connections.
SQLITE3_ALLOWED = ("storage/sqlite/", "verifier/")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    relative = Path(*dotted.split("."))
    return (SRC / relative).with_suffix(".py").is_file() or (SRC / relative / "__init__.py").is_file()


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every import of a colibri module in `path`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            assert node.level == 0, f"{path}: relative import; write the absolute module path"
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                yield node.lineno, candidate if _is_module(candidate) else node.module


def _package(module: str) -> str:
    """The top-level package under colibri (`colibri` itself for the root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "colibri"


def _rank(package: str) -> int:
    for rank, layer in enumerate(LAYERS):
        if package in layer:
            return rank
    raise AssertionError(f"package colibri.{package} has no layer; add it to LAYERS in {__file__}")


def _violation(importer: str, imported: str) -> str | None:
    source, target = _package(importer), _package(imported)
    if source == target:
        return _domain_violation(importer, imported)
    if source == "switchboard" and target not in SWITCHBOARD_MAY_IMPORT:
        return "the switchboard imports only colibri.core, colibri.pipes and colibri.serving"
    if _rank(target) >= _rank(source):
        return "imports a package of the same or a higher layer"
    return None


def _domain_violation(importer: str, imported: str) -> str | None:
    """Domains reach each other only through the other domain's `api` module."""
    source, target = importer.split("."), imported.split(".")
    if source[1] != "domains" or len(source) < 3 or len(target) < 3:
        return None
    if source[2] == target[2] or target[3:] == ["api"]:
        return None
    return f"reaches into domain {target[2]}; import colibri.domains.{target[2]}.api instead"


def test_every_package_has_a_layer() -> None:
    packages = {_package(_name(path)) for path in _modules()}
    for package in packages:
        _rank(package)


def test_no_module_imports_a_package_above_it_or_another_domains_internals() -> None:
    problems = []
    for path in _modules():
        importer = _name(path)
        for line, imported in _imports(path):
            if imported != "colibri" and not imported.startswith("colibri."):
                continue
            why = _violation(importer, imported)
            if why is not None:
                problems.append(f"{path.relative_to(SRC)}:{line}: {importer} -> {imported}: {why}")
    assert problems == []


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("colibri.core.state", "colibri.storage"),
        ("colibri.chain.pipeline", "colibri.runtime.app"),
        ("colibri.tools.catalog", "colibri.chain.envelope"),
        ("colibri.runtime.app", "colibri.verifier.offline"),
        ("colibri.switchboard.server", "colibri.runtime.config"),
        ("colibri.switchboard.server", "colibri.chain.pipeline"),
        ("colibri.domains.tasks.service", "colibri.domains.trail.repository"),
    ],
)
def test_the_check_catches_upward_and_sideways_imports(importer: str, imported: str) -> None:
    assert _violation(importer, imported) is not None


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("colibri.storage.audit_log", "colibri.core.state"),
        ("colibri.domains.tasks.service", "colibri.domains.trail.api"),
        ("colibri.domains.trail.records", "colibri.domains.trail.repository"),
        ("colibri.runtime.server", "colibri.serving.stdio"),
        ("colibri.switchboard.server", "colibri.serving.http"),
        ("colibri.cli", "colibri.runtime.app"),
    ],
)
def test_the_check_allows_downward_imports(importer: str, imported: str) -> None:
    assert _violation(importer, imported) is None


def test_no_module_is_over_300_lines() -> None:
    long = {
        str(path.relative_to(SRC)): lines
        for path in _modules()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these modules (at most {MAX_LINES} lines each)"


def test_only_the_sqlite_backend_and_the_offline_verifier_mention_sqlite3() -> None:
    found = [
        str(path.relative_to(PACKAGE))
        for path in _modules()
        if "sqlite3" in path.read_text() and not str(path.relative_to(PACKAGE)).startswith(SQLITE3_ALLOWED)
    ]
    assert found == []


def test_only_the_postgres_backend_imports_psycopg() -> None:
    found = [
        str(path.relative_to(PACKAGE))
        for path in _modules()
        if "import psycopg" in path.read_text()
        and not str(path.relative_to(PACKAGE)).startswith("storage/postgres/")
    ]
    assert found == []
