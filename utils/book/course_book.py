"""Sphinx extension for the course book (loaded by ``_config.yml`` ``sphinx.local_extensions``).

It does what the book theme does not:

* adds a **Kaggle** entry next to Colab in the rocket (launch) menu of every
  notebook page. Like the Colab link, it points at the page's ``.ipynb`` in the
  repository; both are derived from ``_config.yml`` ``repository.url`` and
  ``repository.branch``, the one place the address is written.
* numbers figures, tables and exercises per chapter, from the chapter's file name:
  the first exercise of ``chapters/02_...`` is "Exercise 2.1", matching the id its
  answer checker uses (``check("2.1", answer)``), and its first figure "Fig. 2.1".
  (Without a numbered table of contents Sphinx counts them across the whole book.)
* defines the substitution ``{{ repository }}`` (a link to ``repository.url``) for prose.
* hides the theme's near-empty top bar on wide screens (it only repeats the search).
* in the student edition (``hide_solutions: true``, see ``utils/book/editions.py``),
  removes ``{solution}`` blocks and the hidden ``solution-values`` cells from the
  notebook and source copies the theme publishes under ``_sources/`` for download, so
  no solution text ships in it; and drops every ``:::{container} instructor-only``
  block from the pages and the downloads (text that speaks of what only the
  instructor edition has: solution notebooks, the instructors' page).

* links every page to the same page in the other language (``editions.py`` builds an
  English and a French edition from the same notebooks), and in the French edition
  writes glued numbers the French way (``0,841``, ``14 672``) and looks up glued words in
  ``locales/fr/LC_MESSAGES/glue.po`` (a glued value missing there is a build warning,
  so ``-W`` fails), makes a unit after a glued number below 2 singular (« 0,66 seconde »),
  writes formulas the French way (``0{,}3302``, ``33\\,088``: ``translations.french_math``),
  translates the alt texts of figures, which myst-nb renders after
  Sphinx's own translation pass, and the interactive figures' captions, descriptions,
  alt texts, control labels and the texts their scripts write (their ``data-strings``
  table) from ``figures.po``, marking each figure ``lang="fr"`` so that its script writes
  numbers the French way; writes the theme's remaining English interface strings in
  French (``FRENCH_INTERFACE``); and shows the static figures' French images
  (``french_plots.swap_images``), the printed outputs' checker messages and results tables
  in French (``french_outputs.translate_outputs``), and the citations and bibliography in
  French (``french_citations``: « Kudo et Richardson, 2018 », « s. d. »).

This is build plumbing, not course content: it is not part of the ``utils`` package
the chapters import.
"""

from __future__ import annotations

import json
import pathlib
import re

KAGGLE_URL = "https://kaggle.com/kernels/welcome?src="

# chapters/NN_name and solutions/NN_name_solutions belong to chapter NN.
_CHAPTER = re.compile(r"^(?:chapters|solutions)/(\d+)_")
STATIC = pathlib.Path(__file__).resolve().parent / "static"

# Opening line of a MyST solution block: ```{solution} or :::{solution}
_OPEN = re.compile(r"^\s*(?P<fence>`{3,}|:{3,})\{solution\}")


def notebook_repo_path(app, pagename: str) -> str | None:
    """Repository-relative path of the ``.ipynb`` paired with ``pagename``, or None."""
    source = pathlib.Path(app.env.doc2path(pagename))
    ipynb = source.with_suffix(".ipynb")
    if not ipynb.is_file():
        return None
    rel = ipynb.resolve().relative_to(pathlib.Path(app.srcdir).resolve()).as_posix()
    prefix = app.config.html_theme_options.get("path_to_docs", "").strip("/")
    return f"{prefix}/{rel}" if prefix else rel


def kaggle_url(repo_url: str, branch: str, path: str) -> str:
    """Kaggle's "open a notebook from GitHub" link for ``path`` in the repository."""
    return f"{KAGGLE_URL}{repo_url.rstrip('/')}/blob/{branch}/{path}"


def add_kaggle_button(app, pagename, templatename, context, doctree):
    """Append a Kaggle link to the theme's launch menu (runs after the theme fills it)."""
    groups = [b for b in context.get("header_buttons", []) if b.get("label") == "launch-buttons"]
    if not groups:
        return
    opts = app.config.html_theme_options
    repo_url = opts.get("repository_url", "")
    path = notebook_repo_path(app, pagename)
    if not repo_url.startswith("https://github.com/") or path is None:
        return
    groups[0]["buttons"].append({
        "type": "link",
        "text": "Kaggle",
        "tooltip": "Launch on Kaggle",
        "icon": "fab fa-kaggle",
        "label": "kaggle-button",
        "url": kaggle_url(repo_url, opts.get("repository_branch") or "main", path),
    })


def number_per_chapter(app, env):
    """Renumber every enumerable node (figure, table, exercise, ...) of a chapter as
    (chapter, k), in page order. Runs after Sphinx has numbered them across the book."""
    changed = []
    for docname, by_type in env.toc_fignumbers.items():
        m = _CHAPTER.match(docname)
        if not m:
            continue
        for figtype, numbers in by_type.items():
            ordered = sorted(numbers, key=numbers.get)
            renumbered = {node_id: (int(m.group(1)), k) for k, node_id in enumerate(ordered, start=1)}
            if renumbered != numbers:
                by_type[figtype] = renumbered
                changed.append(docname)
    return sorted(set(changed))


def add_substitutions(app, config):
    """``{{ repository }}`` in the book's Markdown: a link to ``repository.url``."""
    url = config.html_theme_options.get("repository_url", "")
    subs = dict(config.myst_substitutions or {})
    subs.setdefault("repository", f"[{url}]({url})" if url else "the course repository")
    config.myst_substitutions = subs


def set_default_mode(app, pagename, templatename, context, doctree):
    """The theme's colour mode on a reader's first visit: "auto" (the system's light or dark).
    pydata-sphinx-theme's layout reads it from the page context (``html_context``); left
    unset, the page says ``data-default-mode=""``, the theme's script logs "Got invalid theme
    mode: . Resetting to auto." to the console, and then uses auto: the same page, without
    the error."""
    context["default_mode"] = context.get("default_mode") or "auto"


def add_static(app):
    app.config.html_static_path.append(str(STATIC))


#: Class of a ``{container}`` block that only the instructor edition shows.
INSTRUCTOR_ONLY = "instructor-only"
_INSTRUCTOR_BLOCK = re.compile(r"^(?P<fence>:{3,})\{container\} " + INSTRUCTOR_ONLY + r"[ \t]*\n.*?^(?P=fence)[ \t]*(?:\n|$)",
                               re.M | re.S)


def drop_instructor_only(app, doctree):
    """Student edition: remove every node of class ``instructor-only`` before references resolve."""
    if not getattr(app.config, "hide_solutions", False):
        return
    from docutils import nodes

    for node in list(doctree.findall(nodes.Element)):
        if INSTRUCTOR_ONLY in node.get("classes", []) and node.parent is not None:
            node.parent.remove(node)


def strip_instructor_only(text: str) -> str:
    """Remove every ``:::{container} instructor-only`` block from MyST text."""
    return _INSTRUCTOR_BLOCK.sub("", text)


def strip_solutions(text: str) -> str:
    """Remove every ``{solution}`` block (backtick or colon fenced) from MyST text."""
    out, fence = [], None
    for line in text.splitlines(keepends=True):
        if fence is None:
            m = _OPEN.match(line)
            if m:
                fence = m.group("fence")
                continue
            out.append(line)
        elif re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
            fence = None
    return "".join(out)


#: Tag of a hidden code cell that computes the values worked solutions quote. The
#: student edition drops such cells from its downloadable notebooks and sources,
#: code and outputs: their code would compute the answers.
SOLUTION_VALUES = "solution-values"
_VALUES_CELL = re.compile(r"^(?P<fence>`{3,})\{code-cell\}[^\n]*\n(?::[^\n]*\n)*?:tags: \[[^\]\n]*"
                          + SOLUTION_VALUES + r"[^\]\n]*\][^\n]*\n.*?^(?P=fence)[ \t]*\n?", re.M | re.S)


def strip_solution_values(text: str) -> str:
    """Remove every code cell tagged ``solution-values`` from MyST text."""
    return _VALUES_CELL.sub("", text)


def _strip_notebook(path: pathlib.Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for cell in nb.get("cells", []):
        if SOLUTION_VALUES in cell.get("metadata", {}).get("tags", []):
            continue
        if cell.get("cell_type") == "markdown":
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell["source"] = strip_instructor_only(strip_solutions(src))
        cells.append(cell)
    nb["cells"] = cells
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def strip_published_sources(app, exception):
    """Student edition: take solution blocks and ``solution-values`` cells out of the
    downloadable copies in ``_sources``."""
    if exception is not None or not getattr(app.config, "hide_solutions", False) or app.builder.format != "html":
        return
    sources = pathlib.Path(app.outdir) / "_sources"
    for path in sorted(sources.rglob("*")) if sources.is_dir() else []:
        if path.suffix == ".ipynb":
            _strip_notebook(path)
        elif path.suffix in (".md", ".txt"):
            text = strip_solution_values(path.read_text(encoding="utf-8"))
            path.write_text(strip_instructor_only(strip_solutions(text)), encoding="utf-8")


def _editions():
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_editions", pathlib.Path(__file__).with_name("editions.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LINK_TEXT = {"en": "Read this page in English", "fr": "Lire cette page en français"}


def add_language_link(app, pagename, templatename, context, doctree):
    """A link, at the top of every page, to the same page in the book's other language."""
    if "body" not in context or app.builder.format != "html":
        return
    lang = app.config.language or "en"
    edition = "student" if getattr(app.config, "hide_solutions", False) else "instructor"
    editions = _editions()
    if lang not in editions.LANGUAGES:
        return
    depth = pagename.count("/")
    links = []
    for other, root in editions.other_language_roots(edition, lang).items():
        href = "../" * depth + root + "/" + pagename + ".html"
        links.append(f'<a class="course-language-link" href="{href}" hreflang="{other}" lang="{other}">'
                     f"{_LINK_TEXT[other]}</a>")
        context["metatags"] = context.get("metatags", "") + (
            f'\n<link rel="alternate" hreflang="{other}" href="{href}" />')
    body = f'<p class="course-language">{" ".join(links)}</p>\n' + context["body"]
    if lang == "fr":  # sphinx-exercise's French: "Solution de Exercice 2.1"
        body = re.sub(r"Solution de(<a [^>]*>) ?Exercice ", "Solution de l’\\1exercice ", body)
    context["body"] = body


#: The theme's interface strings that its French catalogue lacks, as they appear in the HTML.
FRENCH_INTERFACE = {
    'placeholder="Search this book..."': 'placeholder="Rechercher dans ce livre…"',
    'aria-label="Search this book..."': 'aria-label="Rechercher dans ce livre…"',
    "Toggle primary sidebar": "Afficher ou masquer la navigation",
    "Toggle secondary sidebar": "Afficher ou masquer le sommaire de la page",
    "Launch interactive content": "Ouvrir dans un environnement interactif",
    "Launch on Colab": "Ouvrir dans Colab",
    "Launch on Kaggle": "Ouvrir dans Kaggle",
    "Toggle hidden content": "Afficher ou masquer le contenu",
    'alt="Colab logo"': 'alt="logo de Colab"',
    'aria-label="Main"': 'aria-label="Principal"',
}


def french_interface(app, exception):
    """French edition: the theme's remaining English interface strings, in French."""
    if exception is not None or (app.config.language or "en") != "fr" or app.builder.format != "html":
        return
    out = pathlib.Path(app.outdir)
    # sphinx-togglebutton's script writes its button's aria-label itself
    for path in [*out.rglob("*.html"), *(out / "_static").glob("togglebutton.js")]:
        text = path.read_text(encoding="utf-8")
        new = text
        for english, french in FRENCH_INTERFACE.items():
            new = new.replace(english, french)
        if new != text:
            path.write_text(new, encoding="utf-8")


def _catalog(app, domain: str):
    """The compiled French (or other) catalogue of ``domain``, or None."""
    from sphinx.locale import init as init_locale

    dirs = [str(pathlib.Path(app.srcdir) / d) for d in app.config.locale_dirs]
    catalog, has = init_locale(dirs, app.config.language, domain)
    return catalog if has else None


def translate_rendered(app, doctree, docname):
    """French edition: glued numbers written the French way, glued words from ``glue.po``,
    formulas with the decimal comma, the interactive figures' texts from ``figures.po``, and
    the alt texts of rendered figures from the page's catalogue."""
    lang = app.config.language or "en"
    if lang == "en" or app.builder.format != "html":
        return
    import translations
    from docutils import nodes
    from sphinx.util import logging
    from sphinx.util.i18n import docname_to_domain

    logger = logging.getLogger(__name__)
    glue = _domain_table(app, "glue").get(docname, {})
    page = _catalog(app, docname_to_domain(docname, app.config.gettext_compact))
    for node in list(doctree.findall(nodes.inline)):
        if "pasted-text" not in node.get("classes", []):
            continue
        text = node.astext()
        french = translations.french_glued(text)
        if french is None and re.search(r"[A-Za-z]{2,}", text):
            french = glue.get(text)
            if french is None:
                logger.warning(f"the glued text {text!r} has no {lang} translation in "
                               f"locales/{lang}/LC_MESSAGES/glue.po (run bash .ci/translations update)",
                               location=docname)
                continue
        if french is not None and translations.is_range(french):  # « de 0,79 à 1,51 »
            at = node.parent.index(node)
            before = node.parent[at - 1].astext() if at > 0 else ""
            french = translations.french_range(french, before)
        if french is not None and french != text:
            node.children = [nodes.Text(french)]
        # « 0,66 seconde »: below 2, the unit after a glued number is singular
        after = node.next_node(descend=False, siblings=True)
        if french is not None and isinstance(after, nodes.Text):
            singular = translations.singular_below_two(french, str(after))
            if singular != str(after):
                after.parent.replace(after, nodes.Text(singular))
    # Formulas: the decimal comma, thin spaces between thousands, « ; » between items (french_math)
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block)))):
        latex = node.astext()
        french = translations.french_math(latex)
        if french != latex:
            node.children = [nodes.Text(french)]
    figures = _domain_table(app, "figures")
    for node in list(doctree.findall(nodes.raw)):
        if "html" not in node.get("format", "") or "aiayn-fig" not in node.astext():
            continue
        html_text, missing = translations.translate_figures(node.astext(), figures.get(docname, {}), lang)
        for text in missing:
            logger.warning(f"the interactive figure's text {text[:60]!r} has no {lang} translation in "
                           f"locales/{lang}/LC_MESSAGES/figures.po (run bash .ci/translations update)",
                           location=docname)
        node.replace_self(nodes.raw("", html_text, format=node["format"]))
    # Most alt texts are translated by Sphinx already; one myst-nb adds later is looked up here
    # (tests/test_french_edition.py checks that no English alt text is left).
    for node in doctree.findall(nodes.image):
        alt = node.get("alt")
        if alt and page is not None:
            node["alt"] = page.gettext(alt)


def _domain_table(app, domain: str) -> dict:
    """{page: {English: translation}} of one of the catalogues ``translations.py`` makes
    beside the pages' own (``glue.po``, ``figures.po``), without its fuzzy or empty messages."""
    cache = app.__dict__.setdefault("_course_tables", {})
    if domain not in cache:
        import translations

        table: dict = {}
        path = pathlib.Path(app.srcdir) / app.config.locale_dirs[0] / app.config.language / "LC_MESSAGES" / f"{domain}.po"
        if path.is_file():
            for m in translations.entries(translations.read_catalog(path)):
                if m.string and not m.fuzzy:
                    table.setdefault(m.context, {})[m.id] = m.string
        cache[domain] = table
    return cache[domain]


#: docname -> the notebook renderer of the page being read (see ``glue_in_translations``).
_NOTEBOOK_RENDERERS: dict = {}


def glue_in_translations(app) -> None:
    """Let ``{glue:text}`` work inside translated prose.

    Sphinx translates a paragraph by parsing its ``msgstr`` as a new small document; that
    document lacks the notebook's glue data (myst-nb keeps its renderer on the page's
    document only while parsing it), so nothing would be pasted. The glue lookup here
    remembers the renderer of each page when the page's own prose first uses it (every
    role of a translation is one of the English, see ``translations.problems``), and a
    translated paragraph falls back to it.
    """
    from myst_nb.ext.glue import roles as glue_roles
    from myst_nb.ext.glue import utils as glue_utils

    original = glue_utils.retrieve_glue_data
    if getattr(original, "_course_book", False):
        return

    def retrieve(document, key):
        docname = getattr(getattr(document.settings, "env", None), "docname", None)
        if "nb_renderer" in document:
            _NOTEBOOK_RENDERERS[docname] = document["nb_renderer"]
        elif docname in _NOTEBOOK_RENDERERS:
            # Lend the renderer for this lookup only: a document must stay picklable.
            document["nb_renderer"] = _NOTEBOOK_RENDERERS[docname]
            try:
                return original(document, key)
            finally:
                del document["nb_renderer"]
        return original(document, key)

    retrieve._course_book = True
    glue_utils.retrieve_glue_data = retrieve
    glue_roles.retrieve_glue_data = retrieve


def drop_repeated_scripts(app, pagename, templatename, context, doctree):
    """Each script once per page. sphinx-thebe adds its inline configuration (``const
    THEBE_JS_URL = ...``) every time Sphinx reads documents, and the build reads twice, so
    every page declared the constant twice and the browser reported "Identifier
    'THEBE_JS_URL' has already been declared". The second copy of a script with the same
    file and body is dropped."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        key = (getattr(script, "filename", str(script)) or "",  # None and "" both mean an inline script
               repr(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


def setup(app):
    app.connect("config-inited", add_substitutions)
    app.connect("html-page-context", set_default_mode)
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    app.connect("builder-inited", add_static)
    app.add_css_file("course_book.css")
    # Sphinx's toctree collector numbers figures in env-get-updated (priority 500).
    app.connect("env-get-updated", number_per_chapter, priority=900)
    # The theme fills the launch menu at priority 501; add Kaggle after it.
    app.connect("html-page-context", add_kaggle_button, priority=502)
    app.connect("build-finished", strip_published_sources)
    app.connect("build-finished", french_interface)
    app.connect("doctree-read", drop_instructor_only)
    app.connect("html-page-context", add_language_link)
    app.connect("doctree-resolved", translate_rendered)
    import french_plots  # utils/book is on the path of a local extension

    app.connect("doctree-resolved", french_plots.swap_images)  # the static figures' French images
    import french_outputs

    app.connect("doctree-resolved", french_outputs.translate_outputs)  # checker messages, named tables' words
    import french_citations

    french_citations.register()  # « Kudo et Richardson, 2018 »: the French styles of labels and entries
    app.connect("doctree-resolved", french_citations.translate_citations)  # notes, « s. d. »
    glue_in_translations(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
