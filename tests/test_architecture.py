"""The shape of the code (SPEC §8, §19): layers that only import downward, no import circles, the
switchboard's packages in their order and each reached only through its public face, small modules,
one driver edge.

Every import in src/colibri is read, wherever it sits (inside functions and TYPE_CHECKING
blocks too), so a lazy import cannot hide an upward dependency or a circle.
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
    frozenset({"tools", "checkpointing"}),
    frozenset({"chain"}),
    frozenset({"pipes"}),
    frozenset({"serving"}),
    frozenset({"runtime", "verifier", "switchboard", "client", "ui", "witness"}),
    frozenset({"cli"}),
    frozenset({"__main__"}),
]
# The switchboard is its own program: it shares the transports and the bottom layer, and (for its
# audit store, SPEC §15) the store as colibri serve keeps one: the storage layer, the log kept while
# a program runs (checkpointing), the catalogue's migrations, and domains only through their `api`.
SWITCHBOARD_MAY_IMPORT = frozenset(
    {"colibri", "core", "pipes", "serving", "switchboard", "storage", "checkpointing", "tools", "domains"}
)
# Within those, only these modules: a domain's api, and the catalogue.
SWITCHBOARD_ONLY = {"tools": frozenset({"colibri.tools.catalog"})}
# The switchboard's packages, lowest first (SPEC §19): each imports only itself and those below it,
# and another package only through what that package's __init__ exports (its `__all__`).
SWITCHBOARD_PACKAGES = ["base", "config", "health", "downstream", "routing", "audit", "faces", "program"]
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
    if source == target == "switchboard":
        return _switchboard_violation(importer, imported)
    if source == target:
        return _domain_violation(importer, imported)
    if source == "switchboard":
        return _switchboard_import_violation(imported)
    if _rank(target) >= _rank(source):
        return "imports a package of the same or a higher layer"
    return None


def _switchboard_import_violation(imported: str) -> str | None:
    target = _package(imported)
    if target not in SWITCHBOARD_MAY_IMPORT:
        return f"the switchboard imports only {', '.join(sorted(SWITCHBOARD_MAY_IMPORT))}"
    if target == "domains" and imported.split(".")[3:] != ["api"]:
        return "the switchboard reaches a domain only through its api module"
    if target in SWITCHBOARD_ONLY and imported not in SWITCHBOARD_ONLY[target]:
        return (
            f"the switchboard imports only {', '.join(sorted(SWITCHBOARD_ONLY[target]))} of colibri.{target}"
        )
    return None


def _domain_violation(importer: str, imported: str) -> str | None:
    """Domains reach each other only through the other domain's `api` module."""
    source, target = importer.split("."), imported.split(".")
    if source[1] != "domains" or len(source) < 3 or len(target) < 3:
        return None
    if source[2] == target[2] or target[3:] == ["api"]:
        return None
    return f"reaches into domain {target[2]}; import colibri.domains.{target[2]}.api instead"


def _switchboard_package(module: str) -> str:
    """The package of a switchboard module (`base`, ...); "" for the switchboard's own __init__."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def _switchboard_rank(package: str) -> int:
    if package == "":
        return -1  # the switchboard's __init__ only describes the packages
    if package not in SWITCHBOARD_PACKAGES:
        raise AssertionError(f"colibri.switchboard.{package} is not in SWITCHBOARD_PACKAGES in {__file__}")
    return SWITCHBOARD_PACKAGES.index(package)


def _switchboard_violation(importer: str, imported: str) -> str | None:
    source, target = _switchboard_package(importer), _switchboard_package(imported)
    if source == target:
        return None
    if _switchboard_rank(target) > _switchboard_rank(source):
        return f"the switchboard's {source} imports {target}, a package above it (see SWITCHBOARD_PACKAGES)"
    return None


def _public_face_violation(importer: str, module: str, name: str | None) -> str | None:
    """Another package of the switchboard is reached only through the names its __init__ exports.

    `module` is the module an import names (`from MODULE import NAME`, or `import MODULE`).
    """
    parts = module.split(".")
    if parts[:2] != ["colibri", "switchboard"] or len(parts) < 3:
        return None
    package = ".".join(parts[:3])
    if importer == package or importer.startswith(package + "."):
        return None
    if len(parts) > 3:
        return f"reaches into {module}; import what {package} exports instead"
    if name is not None and name not in _exported(package):
        return f"{package} does not export {name}; add it to its __all__ or use what it exports"
    return None


def _exported(package: str) -> frozenset[str]:
    """The `__all__` of a package's __init__ (read, not imported)."""
    path = SRC.joinpath(*package.split("."), "__init__.py")
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def _named_imports(path: Path) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) for every import of a colibri module in `path`; name None for `import M`."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def _graph() -> dict[str, set[str]]:
    """Every colibri module and the colibri modules it imports."""
    graph: dict[str, set[str]] = {}
    for path in _modules():
        imported = {module for _, module in _imports(path)}
        graph[_name(path)] = {module for module in imported if module.split(".")[0] == "colibri"}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: each a strongly connected set of modules (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.get(module, ()):
            if imported not in graph:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == module:
                    break
            if len(members) > 1 or module in graph[module]:
                circles.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


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


def test_no_import_circles() -> None:
    """A circle makes the import order decide what exists when: every one is a design to undo."""
    assert _circles(_graph()) == []


@pytest.mark.parametrize(
    "graph",
    [
        {"a": {"b"}, "b": {"a"}},
        {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}},
        {"a": {"a"}},
        # A package __init__ that imports its module, which imports the package back (for a name
        # the __init__ defines) is a circle too.
        {"colibri.pipes": {"colibri.pipes.process"}, "colibri.pipes.process": {"colibri.pipes"}},
    ],
)
def test_the_circle_check_catches_circles(graph: dict[str, set[str]]) -> None:
    assert _circles(graph) != []


def test_the_circle_check_passes_a_tree_with_shared_leaves() -> None:
    assert _circles({"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) == []


def test_every_switchboard_module_sits_in_a_package_of_the_order() -> None:
    root = PACKAGE / "switchboard"
    outside = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if len(parts) == 1 and parts[0] != "__init__.py":
            outside.append(parts[0])
        elif len(parts) > 1:
            _switchboard_rank(parts[0])
    assert outside == [], "put each switchboard module in one of SWITCHBOARD_PACKAGES"


def test_every_switchboard_package_has_a_public_face() -> None:
    for package in SWITCHBOARD_PACKAGES:
        assert _exported(f"colibri.switchboard.{package}"), f"colibri.switchboard.{package} has no __all__"


def test_no_module_reaches_past_a_switchboard_package_s_public_face() -> None:
    problems = []
    for path in _modules():
        importer = _name(path)
        for line, module, name in _named_imports(path):
            why = _public_face_violation(importer, module, name)
            if why is not None:
                problems.append(f"{path.relative_to(SRC)}:{line}: {importer} -> {module}: {why}")
    assert problems == []


@pytest.mark.parametrize(
    ("importer", "module", "name"),
    [
        ("colibri.switchboard.routing.board", "colibri.switchboard.health.machine", "HealthMachine"),
        ("colibri.switchboard.faces.lean", "colibri.switchboard.routing.route", None),
        ("colibri.switchboard.faces.lean", "colibri.switchboard.routing", "router"),
        ("colibri.cli", "colibri.switchboard.program.cli", "run"),
    ],
)
def test_the_check_catches_imports_past_a_public_face(importer: str, module: str, name: str | None) -> None:
    assert _public_face_violation(importer, module, name) is not None


@pytest.mark.parametrize(
    ("importer", "module", "name"),
    [
        ("colibri.switchboard.routing.board", "colibri.switchboard.health", "HealthMachine"),
        ("colibri.switchboard.routing.board", "colibri.switchboard.routing.route", "Route"),
        ("colibri.cli", "colibri.switchboard.program", "run"),
    ],
)
def test_the_check_allows_imports_through_a_public_face(importer: str, module: str, name: str | None) -> None:
    assert _public_face_violation(importer, module, name) is None


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("colibri.core.state", "colibri.storage"),
        ("colibri.chain.pipeline", "colibri.runtime.app"),
        ("colibri.tools.catalog", "colibri.chain.envelope"),
        ("colibri.runtime.app", "colibri.verifier.offline"),
        ("colibri.switchboard.faces.mcp_server", "colibri.runtime.config"),
        ("colibri.switchboard.faces.mcp_server", "colibri.chain.pipeline"),
        ("colibri.domains.tasks.service", "colibri.domains.trail.repository"),
        ("colibri.switchboard.health.probing", "colibri.switchboard.downstream"),
        ("colibri.switchboard.base.contracts", "colibri.switchboard.config.model"),
        ("colibri.switchboard.routing.board", "colibri.switchboard.faces.metrics"),
        ("colibri.switchboard.faces.lean", "colibri.switchboard.program.serve"),
        ("colibri.switchboard.audit.store", "colibri.runtime.checkpoints"),
        ("colibri.switchboard.audit.rows", "colibri.domains.log.appends"),
        ("colibri.switchboard.audit.store", "colibri.tools.__init__"),
        ("colibri.switchboard.audit.rows", "colibri.chain.worker"),
        ("colibri.switchboard.routing.policy", "colibri.switchboard.audit"),
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
        ("colibri.switchboard.faces.mcp_server", "colibri.serving.http"),
        ("colibri.cli", "colibri.runtime.app"),
        ("colibri.switchboard.faces.metrics", "colibri.switchboard.routing"),
        ("colibri.switchboard.program.serve", "colibri.switchboard.faces"),
        ("colibri.switchboard.health.machine", "colibri.switchboard.health.rules"),
        ("colibri.switchboard.audit.rows", "colibri.domains.log.api"),
        ("colibri.switchboard.audit.store", "colibri.tools.catalog"),
        ("colibri.switchboard.audit.store", "colibri.checkpointing"),
        ("colibri.switchboard.audit.rows", "colibri.storage.audit_log"),
        ("colibri.switchboard.faces.status_page", "colibri.switchboard.audit"),
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
