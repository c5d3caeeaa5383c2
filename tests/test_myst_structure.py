"""MyST that parses as its author meant it to.

A slip in MyST rarely breaks the build: it changes what the page shows. A box closed
by ``::: We use ...`` (text after the closing fence) does not close, so the sentence
vanishes into the box and the rest of the cell with it; ``:::admonition`` without the
braces is a plain ``div``; ``{glue: text}`name``` is literal text. This test parses
every ``chapters/*.md`` and ``solutions/*.md`` with myst-parser's own parser, configured
as ``_config.yml`` configures the book, one markdown cell at a time (as myst-nb does),
and walks the tokens, directive bodies included. It fails on:

* a fence (backticks or colons, any length, nested) that does not close, or whose
  closing line carries text;
* a ``:::`` fence that is not a ``{directive}``, a code fence whose language Pygments
  does not know (``` We use`` makes a code block in the language "We"), and a line of a
  paragraph that starts with a fence marker;
* a directive or role that Sphinx, with the book's extensions loaded, does not know,
  and a role that did not parse (``{glue: text}`x```, ``{doc} `x```);
* a glued name ({glue:text}`name`, {glue}`name`, ``{glue:figure} name``) that no code
  cell of the page's notebook glues (read from the stored outputs, which the book shows);
* a {ref}, {numref} or {eq} label that no page defines, a {doc} that names no page of
  the table of contents, a {cite} key missing from the bibliography, and a
  ``{solution}`` whose exercise label does not exist.
"""

from __future__ import annotations

import functools
import io
import posixpath
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
import yaml
from notebooks import ROOT, config, read, toc_files

PAGES = sorted(ROOT.glob("chapters/*.md")) + sorted(ROOT.glob("solutions/*.md"))
BIB = ROOT / "chapters" / "references.bib"

# Directives whose body is not MyST (code, maths, data): their content is not parsed again.
LITERAL = {"code", "code-block", "sourcecode", "code-cell", "math", "raw", "literalinclude", "csv-table",
           "parsed-literal", "glue", "glue:", "glue:any", "glue:figure", "glue:math", "glue:md", "raw-cell"}
GLUE_ROLES = {"glue", "glue:", "glue:any", "glue:md", "glue:text"}
GLUE_DIRECTIVES = {"glue", "glue:", "glue:any", "glue:figure", "glue:math", "glue:md"}
LABEL_ROLES = {"ref", "numref", "std:ref", "std:numref"}
# A role or directive name left in the text: it did not parse as one.
STRAY_ROLE = re.compile(r"\{\s*[A-Za-z][\w.+-]*\s*(?::\s*[\w.+-]*\s*)?\}")
OPTION = re.compile(r"^:([\w-]+):(?:\s+(.*))?$")


@functools.cache
def md_parser(extensions: frozenset | None = None):
    """myst-parser's markdown-it parser with the book's MyST extensions (``parse:`` in _config.yml)."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    if extensions is None:
        extensions = frozenset(config().get("parse", {}).get("myst_enable_extensions", []))
    return create_md_parser(MdParserConfig(enable_extensions=set(extensions)), RendererHTML)


@functools.cache
def sphinx_names() -> tuple[frozenset, frozenset]:
    """(directives, roles) that Sphinx knows once the book's extensions are loaded.

    Builds a Sphinx application (about a second) on an empty project with the extensions
    that Jupyter Book derives from _config.yml, and reads docutils' and the domains'
    registries; names from a domain appear both as ``domain:name`` and, for the default
    (``py``) and ``std`` domains, bare.
    """
    from docutils.parsers.rst import directives, roles
    from jupyter_book.config import get_final_config
    from sphinx.application import Sphinx

    cfg, _ = get_final_config(user_yaml=ROOT / "_config.yml", cli_config={"latex_individualpages": False},
                              sourcedir=ROOT)
    book_dir = str(ROOT / "utils" / "book")  # the course's local extension
    if book_dir not in sys.path:
        sys.path.insert(0, book_dir)
    overrides = {"extensions": [e for e in cfg["extensions"] if e != "sphinx_external_toc"],  # needs a _toc.yml
                 "myst_enable_extensions": cfg.get("myst_enable_extensions", []), "bibtex_bibfiles": [],
                 "mathjax_path": cfg.get("mathjax_path", "")}  # the offline-MathJax extension checks it
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        (src / "index.md").write_text("# empty\n")
        app = Sphinx(str(src), None, f"{tmp}/out", f"{tmp}/doctrees", "html", confoverrides=overrides,
                     status=io.StringIO(), warning=io.StringIO())
        dirs = set(directives._directives) | set(directives._directive_registry)
        rols = set(roles._roles) | set(roles._role_registry)
        for name, domain in app.env.domains.items():
            dirs |= {f"{name}:{d}" for d in domain.directives}
            rols |= {f"{name}:{r}" for r in domain.roles}
            if name in ("py", "std"):
                dirs |= set(domain.directives)
                rols |= set(domain.roles)
    return frozenset(dirs), frozenset(rols)


@dataclass
class Scan:
    """What one piece of MyST holds; line numbers count from 1 in the scanned text."""

    problems: list[tuple[int, str]] = field(default_factory=list)
    roles: list[tuple[int, str, str]] = field(default_factory=list)  # (line, name, content)
    directives: list[tuple[int, str, str, dict]] = field(default_factory=list)  # (line, name, argument, options)
    labels: set[str] = field(default_factory=set)


def split_options(content: str) -> tuple[dict, int]:
    """A directive's options (``:key: value`` lines or a ``---`` YAML block) and how many lines they take."""
    lines = content.split("\n")
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is None:
            return {}, 0
        data = yaml.safe_load("\n".join(lines[1:end])) or {}
        return (data if isinstance(data, dict) else {}), end + 1
    options, n = {}, 0
    for line in lines:
        m = OPTION.match(line)
        if not m:
            break
        options[m[1]] = (m[2] or "").strip()
        n += 1
    return options, n


def _fence_closed(tok, lines: list[str]) -> bool:
    start, end = tok.map
    if end - start < 2:
        return False
    last = lines[end - 1].lstrip(" >")
    char, n = tok.markup[0], len(tok.markup)
    return re.fullmatch(rf"{re.escape(char)}{{{n},}}\s*", last) is not None


@functools.cache
def _known_language(name: str) -> bool:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    if name in ("", "none", "text", "default"):
        return True
    try:
        get_lexer_by_name(name)
    except ClassNotFound:
        return False
    return True


def scan(text: str, first_line: int = 1, parser=None, out: Scan | None = None) -> Scan:
    """Parse ``text`` (one markdown cell, or a directive's body) and walk its tokens."""
    parser = parser or md_parser()
    out = out if out is not None else Scan()
    lines = text.split("\n")
    for tok in parser.parse(text):
        line = first_line + (tok.map[0] if tok.map else 0)
        if tok.type == "myst_target":
            out.labels.add(tok.content.strip().lower())
        elif tok.type == "math_block_label":
            out.labels.add(tok.info.strip().lower())
        elif tok.type in ("fence", "colon_fence"):
            _scan_fence(tok, lines, line, first_line, parser, out)
        elif tok.type == "inline":
            _scan_inline(tok, line, parser, out)
    return out


def _scan_fence(tok, lines, line, first_line, parser, out: Scan) -> None:
    fence = tok.markup
    if not _fence_closed(tok, lines):
        out.problems.append((line, f"the fence {fence}{tok.info.strip()} opened here does not close "
                                   f"(a closing line is {fence} alone, at least as long as the opening)"))
    for i, body_line in enumerate(tok.content.split("\n")):
        m = re.match(rf"\s*({re.escape(fence[0])}{{{len(fence)},}})[ \t]*([^\s{{].*)$", body_line)
        if m:
            out.problems.append((line + 1 + i, f"text after a closing fence: {body_line.strip()[:60]!r} "
                                               f"(the fence does not close there; put the text on its own line)"))
    info = tok.info.strip()
    m = re.match(r"\{([^}\s]*)\}(?:\s+(.*))?$", info)
    if not m:
        if tok.type == "colon_fence":
            out.problems.append((line, f"a ::: fence without a {{directive}}: {fence}{info} renders as a plain "
                                       "block, not a box"))
        elif not _known_language(info.split()[0] if info else ""):
            out.problems.append((line, f"a code fence in the unknown language {info!r} (text after a fence?)"))
        return
    name, argument = m[1], (m[2] or "").strip()
    options, n_options = split_options(tok.content)
    out.directives.append((line, name, argument, options))
    for key in ("label", "name"):
        if options.get(key):
            out.labels.add(str(options[key]).strip().lower())
    if argument:
        _scan_inline_text(argument, line, parser, out)
    if name not in LITERAL and _fence_closed(tok, lines):  # an unclosed fence: the first problem to fix
        body = "\n".join(tok.content.split("\n")[n_options:])
        scan(body, line + 1 + n_options, parser, out)


def _scan_inline_text(text: str, line: int, parser, out: Scan) -> None:
    for tok in parser.parseInline(text):
        _scan_inline(tok, line, parser, out)


def _scan_inline(tok, line: int, parser, out: Scan) -> None:
    for offset, text in enumerate(tok.content.split("\n")):
        if re.match(r"\s*(?::{3,}|`{3,})", text):
            out.problems.append((line + offset, f"a fence marker inside a paragraph: {text.strip()[:60]!r}"))
    parts = []
    for child in tok.children or []:
        if child.type == "myst_role":
            out.roles.append((line, child.meta["name"], child.content))
            parts.append("\0")
        elif child.type == "text":
            parts.append(child.content)
        else:
            parts.append("\0")
    for stray in STRAY_ROLE.finditer("".join(parts)):
        out.problems.append((line, f"{stray[0]} is left as text: a role is written {{name}}`content`, "
                                   "with the backtick right after the brace"))


@dataclass
class Page:
    path: Path
    scan: Scan
    glued: set[str] | None  # names the notebook glues (None: the page has no notebook)


def _glued(ipynb: Path) -> set[str]:
    nb = nbformat.read(ipynb, as_version=4)
    return {o["metadata"]["scrapbook"]["name"] for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}


def scan_page(path: Path) -> Page:
    """Scan every markdown cell of a page (the whole file if it is not a notebook)."""
    text = path.read_text()
    out = Scan()
    if text.startswith("---\njupytext:"):
        cursor = 0
        for cell in read(path).cells:
            if cell.cell_type == "code":
                name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name")
                if name:
                    out.labels.add(name.lower())
                continue
            at = text.find(cell.source, cursor)
            cursor = at if at >= 0 else cursor
            scan(cell.source, text.count("\n", 0, cursor) + 1, out=out)
        ipynb = path.with_suffix(".ipynb")
        glued = _glued(ipynb) if ipynb.is_file() else set()
    else:
        scan(text, out=out)
        glued = None
    return Page(path, out, glued)


@functools.cache
def pages() -> dict[str, Page]:
    return {str(p.relative_to(ROOT)): scan_page(p) for p in PAGES}


@functools.cache
def bib_keys() -> frozenset:
    return frozenset(re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(), re.M))


def _target(content: str) -> str:
    m = re.search(r"<([^<>]+)>\s*$", content)
    return (m[1] if m else content).strip()


def problems(page: Page, labels: set[str], docs: set[str], pages_by_doc: dict[str, Page]) -> list[str]:
    """Everything wrong with one page, as 'line N: message'."""
    known_directives, known_roles = sphinx_names()
    here = posixpath.dirname(str(page.path.relative_to(ROOT)))
    bad = list(page.scan.problems)
    for line, name, argument, _ in page.scan.directives:
        if name not in known_directives:
            bad.append((line, f"unknown directive {{{name}}}: the page shows nothing, or a warning"))
        if name in GLUE_DIRECTIVES:
            bad += _glue_problem(line, argument, page, pages_by_doc)
        if name == "solution" and argument and argument.lower() not in labels:
            bad.append((line, f"{{solution}} {argument}: no exercise has the label {argument!r}"))
    for line, name, content in page.scan.roles:
        if name not in known_roles:
            bad.append((line, f"unknown role {{{name}}}`{content}`"))
        elif name in GLUE_ROLES:
            bad += _glue_problem(line, content, page, pages_by_doc)
        elif name in LABEL_ROLES or name == "eq":
            if _target(content).lower() not in labels:
                bad.append((line, f"{{{name}}}`{content}`: no page defines the label {_target(content)!r}"))
        elif name in ("doc", "std:doc"):
            target = _target(content)
            doc = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(here, target))
            if doc.removesuffix(".md").removesuffix(".ipynb") not in docs:
                bad.append((line, f"{{doc}}`{content}`: {doc!r} is not a page of the book (_toc.yml)"))
        elif name.startswith("cite"):
            for key in content.split(","):
                if key.strip() not in bib_keys():
                    bad.append((line, f"{{{name}}}`{content}`: {key.strip()!r} is not in {BIB.relative_to(ROOT)}"))
        elif name == "download" and not (ROOT / here / _target(content)).exists():
            bad.append((line, f"{{download}}`{content}`: no such file"))
    return [f"line {line}: {message}" for line, message in sorted(bad)]


def _glue_problem(line: int, content: str, page: Page, pages_by_doc: dict[str, Page]) -> list[tuple[int, str]]:
    key = content.strip()
    owner = page
    if "::" in key:  # {glue:text}`other/doc::name` reads another page's notebook
        doc, key = key.split("::", 1)
        owner = pages_by_doc.get(doc)
    key = key.split(":", 1)[0].strip()  # name:format
    if owner is None or owner.glued is None:
        return [(line, f"glued name {key!r}, but the page has no notebook to glue it")]
    if key not in owner.glued:
        return [(line, f"glued name {key!r}: no code cell of {owner.path.with_suffix('.ipynb').name} glues it "
                       "(stored outputs)")]
    return []


def book_problems(path: Path) -> list[str]:
    all_pages = pages()
    labels = set().union(*(p.scan.labels for p in all_pages.values()))
    by_doc = {k.removesuffix(".md"): p for k, p in all_pages.items()}
    return problems(all_pages[str(path.relative_to(ROOT))], labels, set(toc_files()), by_doc)


# ---- self-checks: snippets the test must catch, and good MyST it must pass --------------------------------


def _snippet(text: str, glued=frozenset({"wer"}), labels=frozenset({"fig-a", "ex-1"}), parser=None) -> list[str]:
    page = Page(ROOT / "chapters" / "99_snippet.md", scan(text, parser=parser), set(glued))
    return problems(page, set(labels) | page.scan.labels, set(toc_files()), {})


GOOD = """:::{admonition} Common error
:class: warning
A box with {glue:text}`wer` and {ref}`a figure <fig-a>`.
:::

::::{admonition} Check your understanding
:class: note
A question?

:::{dropdown} Answer
An answer, see {doc}`the next chapter <16_nothing>`, no: {doc}`01_motivation`.
:::
::::

```{exercise}
:label: ex-2
Compute $x$.
```

```{solution} ex-2
:class: dropdown
Like {cite:p}`vaswani2017`.
```

```bash
echo fine
```
"""


def test_good_myst_passes_except_the_missing_page():
    assert _snippet(GOOD) == [
        "line 11: {doc}`the next chapter <16_nothing>`: 'chapters/16_nothing' is not a page of the book (_toc.yml)"]


@pytest.mark.parametrize("text, expected", [
    (":::{admonition} Common error\n:class: warning\nBody.\n::: We use rapidfuzz\nfor it.\n",
     ["text after a closing fence", "does not close"]),
    ("```{exercise}\n:label: ex-3\nText.\n``` and more\n", ["text after a closing fence", "does not close"]),
    (":::{note}\nText.\n", ["does not close"]),
    ("::::{admonition} Check\n:::{dropdown} Answer\nText.\n::::\n", ["does not close"]),  # inner box never closed
    (":::{admonition} Check\n:::{dropdown} Answer\nText.\n:::\n:::\n",  # the first ::: closes the outer box
     ["does not close", "without a {directive}", "does not close"]),
    (":::admonition\nText.\n:::\n", ["without a {directive}"]),
    ("Text\n\n``` We use it\n```\n", ["unknown language"]),
    (":::{admonitoin} Title\nText.\n:::\n", ["unknown directive {admonitoin}"]),
    ("Value {glue:txt}`wer`.\n", ["unknown role {glue:txt}"]),
    ("Value {glue: text}`wer`.\n", ["{glue: text} is left as text"]),
    ("See {doc} `x`.\n", ["{doc} is left as text"]),
    ("Value {glue:text}`wre`.\n", ["glued name 'wre'"]),
    ("See {ref}`fig-b` and {numref}`Figure {number} <fig-c>`.\n", ["label 'fig-b'", "label 'fig-c'"]),
    ("See {doc}`preface <00_prefce>`.\n", ["'chapters/00_prefce' is not a page"]),
    ("As {cite:t}`vaswani2071` says (section 1).\n", ["'vaswani2071' is not in"]),
    ("```{solution} ex-9\nText.\n```\n", ["no exercise has the label 'ex-9'"]),
])
def test_catches_a_bad_snippet(text, expected):
    found = _snippet(text)
    for want in expected:
        assert any(want in f for f in found), f"{text!r}: expected {want!r} among {found}"
    assert len(found) == len(expected), f"{text!r}: {found}"


def test_a_colon_box_without_the_colon_fence_extension_is_a_paragraph():
    plain = md_parser(frozenset({"dollarmath", "amsmath"}))
    found = _snippet(":::{admonition} Title\nText.\n:::\n", parser=plain)
    assert any("fence marker inside a paragraph" in f for f in found), found


def test_the_book_enables_the_colon_fence():
    assert "colon_fence" in config()["parse"]["myst_enable_extensions"]


@pytest.mark.parametrize("md", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_myst_parses_as_meant(md):
    bad = book_problems(md)
    assert not bad, f"{md.relative_to(ROOT)}: {len(bad)} MyST problem(s):\n  " + "\n  ".join(bad)
