"""What a chapter teaches is, line for line, what ``utils`` exports.

Each piece of model code is written once in ``utils`` and shown in full in the
chapter that teaches it. This test finds the chapter's definition and compares
its source text with ``inspect.getsource`` of the ``utils`` object. Any top-level
chapter definition whose name matches a ``utils`` export must match it too, so a
chapter cannot quietly teach a different version of a shared piece.
"""

import ast
import importlib
import inspect
import textwrap

import pytest
from notebooks import ROOT, paired_markdown, read

# The modules whose every public function and class is taught in a chapter.
# (core.checks, core.env, the book's tooling and the exercises are course plumbing, not the model.)
TAUGHT_MODULES = ["core.masks", "model.attention", "model.layers", "model.embeddings", "model.transformer",
                  "model.decoding", "model.kv_cache", "model.recurrent", "training.batching", "training.recipe", "training.checkpoints",
                  "training.distributed",
                  "tasks.reversal.task", "tasks.translation.baselines", "experiments.flops"]
#: Public helpers of those modules that no chapter shows: input checks shared across modules, file
#: plumbing, the batched evaluation helpers that chapters 15 and 16 call but do not teach, and the
#: process bookkeeping of data parallelism (chapter 10 shows the two functions that do the work).
UNTAUGHT = {"training.recipe": {"check_transformer", "dev_loss"},
            "training.distributed": {"World", "start"},
            "training.checkpoints": {"torch_load", "checkpoint_steps"}, "model.decoding": {"decode_by_length"},
            "experiments.flops": {"translation_training_flops"},
            "tasks.translation.baselines": {"words", "word_spans", "join_words", "copy_source",
                                              "single_word_entries"}}


def taught_objects():
    """[(qualified name, object)] for each public def/class of the taught modules."""
    out = []
    for m in TAUGHT_MODULES:
        mod = importlib.import_module(f"utils.{m}")  # a missing module fails here: never skipped
        for name, obj in vars(mod).items():
            if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if obj.__module__ == mod.__name__ and name not in UNTAUGHT.get(m, ()):
                out.append((f"{mod.__name__}.{name}", obj))
    return out


def all_chapter_definitions():
    """{name: [(chapter file name, source)]} over every chapter notebook."""
    found = {}
    for md in paired_markdown():
        if md.parent.name != "chapters":
            continue
        for name, src in chapter_definitions(md).items():
            found.setdefault(name, []).append((md.name, src))
    return found


def chapter_definitions(md):
    """{name: source} for each top-level def/class in the code cells of ``md``."""
    defs = {}
    for cell in read(md).cells:
        if cell.cell_type != "code" or cell.source.lstrip().startswith(("%", "!")):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defs[node.name] = ast.get_source_segment(cell.source, node)
    return defs


def _norm(src):
    return textwrap.dedent(src).strip()


def _utils_exports():
    names = {}
    for modname in ("utils",) + tuple(_utils_modules()):
        mod = importlib.import_module(modname)
        for name, obj in vars(mod).items():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", "").startswith("utils"):
                names.setdefault(name, obj)
    return names


def _utils_modules():
    """Every module of the package, its subpackages' included (not the ``__main__`` command files)."""
    out = []
    for p in sorted((ROOT / "utils").rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        if p.stem == "__main__" or p.is_relative_to(ROOT / "utils" / "checkpoints"):
            continue
        out.append(".".join(parts[:-1] if p.stem == "__init__" else parts))
    return out


def test_every_taught_module_exists():
    assert set(TAUGHT_MODULES) | set(UNTAUGHT) <= {m.removeprefix("utils.") for m in _utils_modules()}


@pytest.mark.parametrize("qualname,obj", taught_objects(), ids=lambda x: x if isinstance(x, str) else "")
def test_each_utils_piece_is_taught_by_a_chapter(qualname, obj):
    defs = all_chapter_definitions().get(obj.__name__, [])
    assert defs, f"no chapter defines {obj.__name__}: the chapter that teaches {qualname} must show its code"
    for chapter, src in defs:
        assert _norm(src) == _norm(inspect.getsource(obj)), (
            f"{chapter} teaches a {obj.__name__} that differs from {qualname}: make them identical"
        )


@pytest.mark.parametrize("md", paired_markdown(), ids=lambda p: p.name)
def test_no_chapter_redefines_a_utils_piece_differently(md):
    exports = _utils_exports()
    for name, src in chapter_definitions(md).items():
        if name in exports:
            assert _norm(src) == _norm(inspect.getsource(exports[name])), (
                f"{md.name} defines {name}, which differs from utils' {exports[name].__module__}.{name}"
            )
