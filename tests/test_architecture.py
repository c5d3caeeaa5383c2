"""The architecture of ``utils/`` (drawn in ``utils/README.md``) holds, and a change that breaks it fails here.

- Layers, from the top: the book's tooling (``book``, ``exercises``, ``figures``), ``experiments``,
  ``tasks``, ``training``, ``model``, ``core``. A module imports its own layer and the layers
  below, never one above; the three tasks never import each other. Checked by import-linter's
  layers and independence contracts (``tests/importlinter.ini``).
- No import cycle anywhere in ``utils``, within a layer included (the import graph is grimp's,
  the library import-linter is built on; imports inside functions count).
- No module imports another module's private name (``from .x import _helper`` or ``x._helper``):
  a helper that two modules need is a public function with a home.

Each rule is also shown failing: the tests copy ``utils/`` (its Python files) into a temporary
folder, add one bad import, and check that the rule names it.
"""

import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from notebooks import ROOT

CONFIG = ROOT / "tests" / "importlinter.ini"
LINT_IMPORTS = pathlib.Path(sys.executable).with_name("lint-imports")


def copy_utils(tmp_path) -> pathlib.Path:
    """A copy of utils/'s Python files (no shipped checkpoints) under tmp_path; returns tmp_path."""
    shutil.copytree(ROOT / "utils", tmp_path / "utils", ignore=shutil.ignore_patterns("checkpoints", "static", "js", "*.css"))
    return tmp_path


def add_line(path: pathlib.Path, line: str) -> None:
    """Append an import at the end of a module (after its own imports, so the module still loads)."""
    path.write_text(path.read_text() + f"\n{line}\n")


def lint_imports(root) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), str(CONFIG), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def import_graph(root) -> dict[str, list[str]]:
    """{module: the utils modules it imports directly} for the package under ``root``, by grimp."""
    code = ("import grimp, json; g = grimp.build_graph('utils', cache_dir=None); "
            "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                         capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout)


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One import cycle [a, b, ..., a] of ``graph``, or None (depth-first search)."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in graph.get(m, ()):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def private_imports(root) -> list[str]:
    """Every place a module of ``root/utils`` imports another module's private name, or reads one as an attribute."""
    found = []
    for path in sorted((pathlib.Path(root) / "utils").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        package = parts[:-1]  # the package that relative imports start from (an __init__'s is its own folder)
        tree = ast.parse(path.read_text())
        modules = {}  # local name -> the utils module or object it was imported as
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = list(package[: len(package) - node.level + 1]) if node.level else []
                source = ".".join(base + ([node.module] if node.module else []))
                if not source.startswith("utils"):
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{'.'.join(parts)} imports {source}.{alias.name} (line {node.lineno})")
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                modules.update({a.asname: a.name for a in node.names if a.name.startswith("utils") and a.asname})
                if any(a.name.startswith("utils") and not a.asname for a in node.names):
                    modules["utils"] = "utils"  # `import utils.x.y`: read as the dotted name utils.x.y._z
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            dotted, value = [], node.value
            while isinstance(value, ast.Attribute):
                dotted.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in modules:
                owner = ".".join([modules[value.id], *dotted])
                found.append(f"{'.'.join(parts)} reads {owner}.{node.attr} (line {node.lineno})")
        for node in ast.walk(tree):  # getattr(module, "_name")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in modules
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                    and node.args[1].value.startswith("_") and not node.args[1].value.startswith("__")):
                found.append(f"{'.'.join(parts)} reads {modules[node.args[0].id]}.{node.args[1].value} (line {node.lineno})")
    return found


def test_the_layers_and_the_independent_tasks_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, f"import-linter found a broken contract:\n{result.stdout[-3000:]}{result.stderr[-2000:]}"
    assert "2 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("module,line,message", [
    ("core/masks.py", "from ..tasks import g2p  # noqa", "utils.core is not allowed to import utils.tasks"),
    ("model/layers.py", "from ..training import recipe  # noqa", "utils.model is not allowed to import utils.training"),
    ("training/loop.py", "from ..experiments import flops  # noqa", "utils.training is not allowed to import utils.experiments"),
    ("tasks/g2p.py", "from .translation import data  # noqa", "utils.tasks.g2p is not allowed to import utils.tasks.translation"),
], ids=["core->tasks", "model->training", "training->experiments", "task->task"])
def test_an_upward_import_or_one_task_importing_another_is_refused(tmp_path, module, line, message):
    root = copy_utils(tmp_path)
    add_line(root / "utils" / module, line)
    result = lint_imports(root)
    assert result.returncode != 0 and message in result.stdout, result.stdout[-3000:]


def test_no_import_cycle_in_utils():
    graph = import_graph(ROOT)
    assert len(graph) > 50 and "utils.training.loop" in graph["utils.tasks.g2p"]  # the graph is the real one
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_a_cycle_within_a_layer_is_found(tmp_path):
    root = copy_utils(tmp_path)
    add_line(root / "utils" / "core" / "checks.py", "from . import env  # noqa")  # env imports checks
    assert find_cycle(import_graph(root)) in (["utils.core.checks", "utils.core.env", "utils.core.checks"],
                                              ["utils.core.env", "utils.core.checks", "utils.core.env"])


def test_no_module_imports_another_modules_private_name():
    assert len(list((ROOT / "utils").rglob("*.py"))) > 60  # the scan reads the real package
    assert private_imports(ROOT) == []


def test_the_independence_contract_lists_every_task():
    tasks = sorted(p.stem if p.is_file() else p.name for p in (ROOT / "utils" / "tasks").iterdir()
                   if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file())
    listed = sorted(line.strip().removeprefix("utils.tasks.") for line in CONFIG.read_text().splitlines()
                    if line.strip().startswith("utils.tasks."))
    assert tasks == listed == ["g2p", "reversal", "translation"], (tasks, listed)


def test_a_new_subpackage_outside_the_layers_is_refused(tmp_path):
    root = copy_utils(tmp_path)
    (root / "utils" / "extra").mkdir()
    (root / "utils" / "extra" / "__init__.py").write_text("from ..tasks import g2p  # noqa\n")
    result = lint_imports(root)
    assert result.returncode != 0 and "utils.extra" in result.stdout, result.stdout[-3000:]


def test_a_private_import_is_found(tmp_path):
    root = copy_utils(tmp_path)
    add_line(root / "utils" / "tasks" / "g2p.py", "from ..model.decoding import _check_beam  # noqa")
    add_line(root / "utils" / "experiments" / "baseline.py", "_ = g2p._check_word  # noqa")
    add_line(root / "utils" / "experiments" / "flops.py", "import utils.model.decoding  # noqa\n_ = utils.model.decoding._check_src")
    add_line(root / "utils" / "figures" / "base.py", "from ..core import masks  # noqa\n_ = getattr(masks, '_x', None)")
    add_line(root / "utils" / "core" / "__init__.py", "from .checks import _accepted_masks  # noqa")
    found = private_imports(root)
    assert len(found) == 5, found
    assert found[0].startswith("utils.core.__init__ imports utils.core.checks._accepted_masks")
    assert found[1].startswith("utils.experiments.baseline reads utils.tasks.g2p._check_word")
    assert found[2].startswith("utils.experiments.flops reads utils.model.decoding._check_src")
    assert found[3].startswith("utils.figures.base reads utils.core.masks._x")
    assert found[4].startswith("utils.tasks.g2p imports utils.model.decoding._check_beam")
