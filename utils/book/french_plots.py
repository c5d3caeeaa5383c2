"""The French edition's static figures: the notebooks' matplotlib plots drawn again with French text.

    python -m utils.book.french_plots                  # every notebook of the book that draws a static figure
    python -m utils.book.french_plots chapters/10_training.ipynb [...]   # only these
    python -m utils.book.french_plots --jobs 2         # two notebooks at a time

The book shows the PNG images stored in the executed notebooks, and those have English
titles, axis labels, legends and tick words. This command executes each notebook that
holds such an image in a temporary copy (the committed notebook is not touched) with a
hook installed in its kernel first (``install``): every string matplotlib sets on a
``Text`` (a title, an axis label, a legend entry, a tick label, an annotation) goes
through the catalogue ``locales/fr/LC_MESSAGES/plots.po`` (context: the page), and a
string that is a plain number is written the French way (``0,5``, ``−1,2``, ``4 000``;
``translations.french_number``) or, inside ``$...$``, as ``translations.french_math``
writes it. Layout (``tight_layout``, ``bbox_inches="tight"``) then measures the French
text, since the text is replaced where it is set, not when it is drawn.

The French images go to ``locales/fr/plots/<notebook stem>/<sha256 of the English PNG>.png``,
and ``locales/fr/plots/manifest.json`` lists, per page, each English image's hash (of the
bytes stored in the committed ``.ipynb``), its French file, and the English texts it
showed with the French each got. Those English texts are the messages of the template
``plots.pot`` (``translations.EXTRA_TEMPLATES``), so ``bash .ci/translations update``
gives the translator every one of them; data that is shown as text (tokens, words of a
German or English sentence, run names) is translated as itself. The French build swaps
each image whose English bytes are in the manifest for its French file (``swap_images``,
hooked on ``doctree-resolved`` by ``course_book.py``); nothing is executed by a build.

After re-executing a chapter that draws a figure (``bash .ci/sync``), or after changing a
translation in ``plots.po``, run this command again for that chapter:
``tests/test_french_plots.py`` fails until the manifest matches the committed notebooks
and the catalogue.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pathlib
import re
import sys
import tempfile
import time

try:
    from . import translations
except ImportError:  # loaded as a file: by Sphinx (utils/book on its path) or in a kernel
    import translations

ROOT = pathlib.Path(__file__).resolve().parents[2]
LANG = "fr"
PLOTS_DOMAIN = translations.PLOTS_DOMAIN
PLOTS = ROOT / "locales" / LANG / "plots"
MANIFEST = PLOTS / "manifest.json"
CATALOGUE = ROOT / "locales" / LANG / "LC_MESSAGES" / f"{PLOTS_DOMAIN}.po"
COMMAND = "python -m utils.book.french_plots"
#: Seconds a notebook may take (chapter 16 takes about 100 s).
TIMEOUT = 900

_MATH = re.compile(r"\$[^$]*\$")
#: A setting written as code (``p_drop=0.1``, ``norm=pre``, ``scale=False``): kept as it is.
_SETTING = re.compile(r"(?<![\w.])[A-Za-z_]\w*=[\w.+-]*")
_MINUS = "\u2212"


# ----------------------------------------------------------------------------- texts


def has_words(text: str) -> bool:
    """Whether a figure's text holds words (two letters in a row outside ``$...$`` and
    outside settings written as code, ``norm=pre``): such a text is a message of
    ``plots.po``; any other (a number, a formula, ``<s>``, ``h=1, scale=False``) is written
    the French way by rule (``french_symbols``)."""
    return re.search(r"[A-Za-z]{2,}", _SETTING.sub("", _MATH.sub("", text))) is not None


def french_symbols(text: str) -> str:
    """A figure's text without words, written the French way: a plain number by
    ``translations.french_number`` (a minus sign is the typographic one, U+2212, as matplotlib
    writes it: ``−0,5``; ``1000`` becomes ``1 000``, as in the prose), each ``$...$`` formula
    by ``translations.french_math``; anything else (``(1, 6, 64)``, ``<s>``, ``p_drop=0.1``)
    as it is."""
    number = translations.french_number(text.replace(_MINUS, "-"))
    if number is not None:
        # 1000 (a tick label) as the French prose writes it: 1 000
        whole = re.fullmatch(r"([-+\u2212]?)(\d{4,})(.*)", number, re.S)
        if whole:
            number = whole.group(1) + f"{int(whole.group(2)):,}".replace(",", translations.NNBSP) + whole.group(3)
        return number  # a minus sign is U+2212 (translations.french_number)
    return _MATH.sub(lambda m: translations.french_math(m.group(0)), text)


def french_text(text: str, table: dict[str, str]) -> str | None:
    """The French of one of a figure's texts: from ``table`` {English: French} (the page's
    messages of ``plots.po``) when it holds words, None when ``table`` lacks it; by rule
    otherwise."""
    if not text or not has_words(text):
        return french_symbols(text) if text else text
    return table.get(text)


# ----------------------------------------------------------------------------- in the kernel


def install(table: dict[str, str], record: str) -> None:
    """Make matplotlib write French in this process: every text set on a ``Text`` is
    replaced by ``french_text`` (English kept when ``table`` lacks it), and each figure
    rendered (``FigureCanvasBase.print_figure``, which IPython's inline display calls)
    appends {English: French or None} of its texts with words to the JSON list in the file
    ``record``. PNGs are written with ``pil_kwargs={"optimize": True}`` (smaller files, the
    same pixels)."""
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.text import Text

    set_text, print_figure = Text.set_text, FigureCanvasBase.print_figure
    made: set[str] = set()  # French already written: a text read back and set again stays
    figures: list[dict] = []

    def french_set_text(self, s):
        set_text(self, s)
        english = self.get_text()
        if english in made:
            return
        french = french_text(english, table)
        self._course_english = english
        self._course_french = french
        if french is not None and french != english:
            made.add(french)
            set_text(self, french)

    def french_print_figure(self, filename, *args, **kwargs):
        if str(kwargs.get("format", "png")).lower() == "png":
            kwargs.setdefault("pil_kwargs", {"optimize": True})
        out = print_figure(self, filename, *args, **kwargs)
        texts: dict = {}
        for text in self.figure.findobj(Text):
            english = getattr(text, "_course_english", "")
            if english and has_words(english) and text.get_visible() and text.get_text():
                texts[english] = text._course_french
        figures.append(texts)
        pathlib.Path(record).write_text(json.dumps(figures, ensure_ascii=False), encoding="utf-8")
        return out

    Text.set_text = french_set_text
    FigureCanvasBase.print_figure = french_print_figure


def hook_cell(table_path: pathlib.Path, record_path: pathlib.Path) -> str:
    """The code of the cell put first in the temporary copy: it loads this file (not the
    ``utils`` package, whose import would come before the notebook's own setup cell) and
    calls ``install``."""
    here = pathlib.Path(__file__).resolve()
    return "\n".join([
        "import importlib.util as _u, json as _j, pathlib as _p, sys as _s",
        f"_s.path.insert(0, {str(here.parent)!r})",
        f"_spec = _u.spec_from_file_location('course_french_plots', {str(here)!r})",
        "_m = _u.module_from_spec(_spec); _spec.loader.exec_module(_m)",
        "_s.path.pop(0)",
        f"_m.install(_j.loads(_p.Path({str(table_path)!r}).read_text(encoding='utf-8')), {str(record_path)!r})",
        "del _u, _j, _p, _s, _spec, _m",
    ])


# ----------------------------------------------------------------------------- notebooks and manifest


def png_sha(data: str | list[str]) -> str:
    """sha256 (hex) of a PNG as a notebook stores it (base64 text, maybe in lines)."""
    return hashlib.sha256(base64.b64decode("".join(data) if isinstance(data, list) else data)).hexdigest()


def notebook_images(nb: dict) -> list[tuple[int, int, str]]:
    """(cell index, output index, sha256 of the PNG) of every PNG image a notebook's
    outputs hold, in order."""
    out = []
    for i, cell in enumerate(nb.get("cells", [])):
        for j, output in enumerate(cell.get("outputs", [])):
            data = output.get("data", {}).get("image/png")
            if data:
                out.append((i, j, png_sha(data)))
    return out


def page_name(path: pathlib.Path) -> str:
    """The page of a notebook, as the catalogues name it (``chapters/10_training``)."""
    return path.resolve().relative_to(ROOT).with_suffix("").as_posix()


def _toc_pages() -> list[str]:
    """The pages of the table of contents (``tests/notebooks.py``)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from notebooks import toc_files
    finally:
        sys.path.pop(0)
    return toc_files()


def book_notebooks() -> list[pathlib.Path]:
    """The notebooks of the table of contents whose committed outputs hold a PNG image, in order."""
    out = []
    for name in _toc_pages():
        path = ROOT / f"{name}.ipynb"
        if path.is_file() and notebook_images(json.loads(path.read_text(encoding="utf-8"))):
            out.append(path)
    return out


def read_manifest(path: pathlib.Path = MANIFEST) -> dict:
    """{page: [{"cell", "output", "english", "french", "texts"}, ...]}: for each image of a
    page, where it is in the notebook, the sha256 of its English PNG, its French file
    (relative to ``locales/fr/plots``) and {English text: French text} of its words."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def write_manifest(manifest: dict, path: pathlib.Path = MANIFEST) -> None:
    """Write the manifest, pages sorted (a stable, reviewable file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def catalogue_table(path: pathlib.Path = CATALOGUE) -> dict[str, dict[str, str]]:
    """{page: {English: French}} of ``plots.po``, without its empty or fuzzy messages."""
    table: dict = {}
    if path.is_file():
        for m in translations.entries(translations.read_catalog(path)):
            if m.string and not m.fuzzy:
                table.setdefault(m.context, {})[m.id] = m.string
    return table


def french_file(page: str, english_sha: str) -> str:
    """Where the French image of an English one is kept, relative to ``locales/fr/plots``."""
    return f"{pathlib.PurePosixPath(page).name}/{english_sha}.png"


def run(path: pathlib.Path, table: dict[str, str], log=print) -> list[dict]:
    """Execute a temporary copy of the notebook ``path`` with French figures; write its
    French images under ``locales/fr/plots/<stem>/`` (removing older ones there) and return
    its manifest entries."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    english = notebook_images(nb)
    if not english:
        return []
    del nb.cells[english[-1][0] + 1:]  # what follows the last figure cannot change it
    with tempfile.TemporaryDirectory() as tmp:
        table_path, record_path = pathlib.Path(tmp) / "table.json", pathlib.Path(tmp) / "record.json"
        table_path.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
        nb.cells.insert(0, nbformat.v4.new_code_cell(hook_cell(table_path, record_path)))
        client = NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
        records = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else []
    nb.cells.pop(0)
    french = [(i, j, "".join(o["data"]["image/png"])) for i, cell in enumerate(nb.cells)
              for j, o in enumerate(cell.get("outputs", [])) if o.get("data", {}).get("image/png")]
    # the same cells (a cell's stream outputs may be split differently: output indices may differ)
    if [i for i, _, _ in french] != [i for i, _, _ in english] or len(records) != len(french):
        raise RuntimeError(f"{path.name}: the French run drew {len(french)} images ({len(records)} rendered) where the "
                           f"committed notebook holds {len(english)}, at other places: is the notebook up to date "
                           "(bash .ci/sync)?")
    page = page_name(path)
    folder = PLOTS / pathlib.PurePosixPath(page).name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    entries = []
    for (i, j, sha), (_, _, data), texts in zip(english, french, records):
        name = french_file(page, sha)
        (PLOTS / name).write_bytes(base64.b64decode(data))
        entries.append({"cell": i, "output": j, "english": sha, "french": name, "texts": texts})
    missing = sorted({t for e in entries for t, fr in e["texts"].items() if fr is None})
    log(f"{page}: {len(entries)} French images" + (f", {len(missing)} texts not translated in plots.po" if missing else ""))
    return entries


# ----------------------------------------------------------------------------- the French build


def french_images(manifest: dict | None = None) -> dict[str, pathlib.Path]:
    """{sha256 of an English PNG: its French file}."""
    manifest = read_manifest() if manifest is None else manifest
    return {e["english"]: PLOTS / e["french"] for figures in manifest.values() for e in figures}


def swap_images(app, doctree, docname) -> None:
    """French edition (``doctree-resolved``): point every image that myst-nb wrote from a
    notebook's PNG output at the French file the manifest gives for those bytes. An output
    image without one is a build warning (``-W`` fails): run this module's command."""
    if (app.config.language or "en") != LANG or app.builder.format != "html":
        return
    from docutils import nodes
    from sphinx.util import logging

    cache = app.__dict__.setdefault("_course_french_images", {})
    if "table" not in cache:
        cache["table"] = french_images()
    srcdir = pathlib.Path(app.srcdir).resolve()
    outputs = pathlib.Path(app.outdir).resolve().parent / "jupyter_execute"  # myst-nb's output folder
    for node in doctree.findall(nodes.image):
        uri = node.get("candidates", {}).get("*") or node.get("uri", "")
        path = (srcdir / uri.lstrip("/")).resolve()
        if path.suffix != ".png" or not path.is_relative_to(outputs) or not path.is_file():
            continue
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        french = cache["table"].get(sha)
        if french is None:
            logging.getLogger(__name__).warning(
                f"a figure of this page has no French version (English PNG {sha[:12]}): run "
                f"`{COMMAND} {docname}.ipynb`", location=docname)
            continue
        uri = os.path.relpath(french, srcdir).replace(os.sep, "/")  # Sphinx's form: relative to the source folder
        node["uri"] = uri
        node["candidates"] = {"*": uri}
        app.env.images.add_file(docname, uri)


def _run_one(path: pathlib.Path, table: dict[str, str]) -> tuple[str, list[dict] | None, str]:
    """``run`` in a worker process: (page, its entries or None if it failed, a line to print)."""
    start = time.monotonic()
    lines: list[str] = []
    try:
        entries = run(path, table, log=lines.append)
    except Exception as exc:  # one notebook's failure must not lose the others' images
        return page_name(path), None, f"{page_name(path)}: FAILED: {type(exc).__name__}: {str(exc)[-2000:]}"
    return page_name(path), entries, f"{' '.join(lines)} ({time.monotonic() - start:.0f} s)"


def main(argv: list[str]) -> int:
    """Draw the French images of the notebooks named (default: every one of the book with a
    PNG output), update the manifest, and say what ``plots.po`` still lacks. ``--jobs N``
    runs N notebooks at a time (default 1)."""
    jobs = 1
    if "--jobs" in argv:
        at = argv.index("--jobs")
        jobs, argv = int(argv[at + 1]), argv[:at] + argv[at + 2:]
    paths = [pathlib.Path(a).resolve().with_suffix(".ipynb") for a in argv] or book_notebooks()
    table = catalogue_table()
    manifest = read_manifest()
    start = time.monotonic()
    todo = []
    for path in paths:
        if notebook_images(json.loads(path.read_text(encoding="utf-8"))):
            todo.append(path)
        else:
            manifest.pop(page_name(path), None)
            print(f"{page_name(path)}: no PNG image")
    from concurrent.futures import ProcessPoolExecutor, as_completed

    failed = []
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_run_one, path, table.get(page_name(path), {})) for path in todo]
        for future in as_completed(futures):
            page, entries, line = future.result()
            print(line, flush=True)
            if entries is None:
                failed.append(page)
                continue
            manifest[page] = entries
            write_manifest(manifest)
    # pages gone from the book lose their images (a page of the book named here without an image lost them above)
    for page in [p for p in manifest if not (ROOT / f"{p}.ipynb").is_file() or p not in _toc_pages()]:
        del manifest[page]
    write_manifest(manifest)
    kept = {e["french"] for figures in manifest.values() for e in figures}
    for png in PLOTS.rglob("*.png"):
        if png.relative_to(PLOTS).as_posix() not in kept:
            png.unlink()
    missing = {(page, t) for page, figures in manifest.items() for e in figures for t, fr in e["texts"].items() if fr is None}
    size = sum(p.stat().st_size for p in PLOTS.rglob("*.png"))
    print(f"{len(todo)} notebooks in {time.monotonic() - start:.0f} s; {len(kept)} French images in all, {size:,} bytes")
    if failed:
        print(f"FAILED: {', '.join(failed)} (their French images are those of the last run that succeeded)")
    if missing:
        print(f"{len(missing)} texts have no French yet: run `bash .ci/translations update`, translate "
              f"locales/{LANG}/LC_MESSAGES/{PLOTS_DOMAIN}.po, then run `{COMMAND}` again")
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
