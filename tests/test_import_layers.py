"""The package's imports form no cycle (DESIGN.md: data flows down, never back up), and the
command line's own layers hold: its argument types and output helpers import nothing of
banditkit, and nothing below the command line imports it. Read from the source's ``import``
statements (those inside functions too: a lazy import is still a dependency), without running
them; imports under ``if TYPE_CHECKING:`` never run and are left out."""

from __future__ import annotations

import ast
from pathlib import Path

import banditkit

ROOT = Path(banditkit.__file__).resolve().parent


def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name → (file, is a package's ``__init__``)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def _target(module: str, package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def import_graph(root: Path = ROOT, type_checking: bool = False) -> dict[str, set[str]]:
    """Module → the modules of the package it imports (``from .x import name`` names the
    submodule ``x.name`` when there is one, else ``x``); with ``type_checking``, the imports
    under ``if TYPE_CHECKING:`` too."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for module, (path, package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = set() if type_checking else {
            id(inner) for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for statement in node.body for inner in ast.walk(statement)}
        edges = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                edges |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom):
                target = _target(module, package, node)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    edges |= {sub} if sub in modules else ({target} & modules.keys())
        graph[module] = edges - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert {"banditkit.cli", "banditkit.cli.experiment", "banditkit.live"} <= set(graph)
    assert cycles(graph) == []


def test_no_cycle_even_through_type_only_imports():
    """A cycle through ``if TYPE_CHECKING:`` imports never runs, but it is still a circle in
    the design (issue 33 found two: engines → trial → protocol → engines, and the live
    readout's adjusted ↔ statistics); none is left."""
    graph = import_graph(type_checking=True)
    assert cycles(graph) == []
    # the finder sees type-only edges at all (protocol names its engines for type checkers)
    assert "banditkit.engines" in graph["banditkit.protocol"]
    assert "banditkit.engines" not in import_graph()["banditkit.protocol"]


def test_the_live_parts_layers():
    """live/ is laid out by the parts of an experiment (DESIGN.md): the store at the bottom
    imports no other part; the journal imports the store and nothing of assignment, outcomes
    or the readout; no part imports the coordinator (banditkit.live.experiment), which alone
    wires them together."""
    graph = import_graph(type_checking=True)
    live = "banditkit.live."

    def part(module: str) -> str:
        rest = module[len(live):] if module.startswith(live) else ""
        return rest.split(".")[0] if rest else ""

    parts = {"store", "journal", "assignment", "outcomes", "readout"}
    for module, edges in graph.items():
        if part(module) not in parts:
            continue
        used = {part(m) for m in edges if m.startswith(live)}
        assert "experiment" not in used, module
        if part(module) == "store":
            assert used <= {"store", "errors", "inputs"}, (module, used)
        if part(module) == "journal":
            assert not used & {"assignment", "outcomes", "readout"}, (module, used)
    assert {m for m in graph if part(m) in parts} >= {
        f"{live}store.schema", f"{live}journal.replay", f"{live}assignment.assigner",
        f"{live}outcomes.recorder", f"{live}readout.reader"}


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import():
    """The finder itself: the cycle of the former cli.py / cli_experiment.py (each imported the
    other inside a function) is one component; a chain is none."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_command_line_layers():
    graph = import_graph()
    cli = {m for m in graph if m == "banditkit.cli" or m.startswith("banditkit.cli.")}
    # the bottom layer: argument types and output helpers import nothing of banditkit
    assert graph["banditkit.cli.args"] == set()
    assert graph["banditkit.cli.output"] == set()
    # no command module imports the dispatch (banditkit.cli): only the dispatch knows them all
    assert {m for m in cli if "banditkit.cli" in graph[m]} == set()
    # below the command line (library, service) nothing imports it; python -m banditkit runs it
    users = {m for m, edges in graph.items() if edges & cli and m not in cli}
    assert users == {"banditkit.__main__"}
