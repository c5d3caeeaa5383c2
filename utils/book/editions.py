"""Build an edition of the book (what ``bash .ci/build`` runs).

    python utils/book/editions.py [instructor|student] [en|fr] [more jupyter-book build options]

* **instructor** (default): ``_config.yml`` and ``_toc.yml`` as they are: every
  chapter's ``{solution}`` dropdowns are shown and the solution notebooks are in
  the table of contents. Output: ``_build/html``.
* **student**: the same book with sphinx-exercise's ``hide_solutions: true`` (the
  ``{solution}`` blocks and ``instructor-only`` containers are dropped when the pages
  are read) and without the ``solutions/`` pages and the instructors' page. Its ``_config.yml`` and ``_toc.yml`` are generated from the
  instructor ones into the output folder, so there is nothing extra to keep in
  sync. Output: ``_build/student/_build/html``.

* **fr**: the same notebooks with their prose (headings, paragraphs, captions, alt texts,
  exercise statements, the table of contents) translated through the Sphinx gettext
  catalogues in ``locales/fr/LC_MESSAGES/`` (``utils/book/translations.py`` makes and
  checks them). Code and outputs are the English edition's. Output:
  ``_build/fr/_build/html`` (instructor) and ``_build/student-fr/_build/html`` (student).
  Every page of each language links to the same page in the other
  (``utils/book/course_book.py``).

No edition executes anything: both render the outputs stored in the committed
``.ipynb`` files, which nbval re-executes and compares in the tests (``bash .ci/test``).
To re-execute a chapter after editing its ``.md``, run ``bash .ci/sync chapters/X.md``.

Both builds run ``jupyter-book build`` with ``-W -n --keep-going`` (warnings are
errors). Set ``COURSE_BUILD_DIR`` to build somewhere other than the repository
(for example ``COURSE_BUILD_DIR=/tmp/mybuild``: outputs then go to
``/tmp/mybuild/_build/html`` and ``/tmp/mybuild/_build/student/_build/html``).
"""

from __future__ import annotations

import copy
import os
import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
EDITIONS = ("instructor", "student")
#: Languages of the book: English (the notebooks' own) and French (from the catalogues).
LANGUAGES = ("en", "fr")
LOCALES = ROOT / "locales"
#: The book's title in each language (English: ``_config.yml``).
TITLES = {"fr": "« Attention Is All You Need », reconstruit et testé"}
STUDENT_SUFFIX = {"en": " (student edition)", "fr": " (édition étudiante)"}
AUTHORS = {"fr": "Les auteurs du cours"}
#: myst-nb's toggle of a hidden cell (the setup cell), in each language but English.
NOTEBOOK_PROMPTS = {"fr": {"nb_code_prompt_show": "Afficher la cellule de code",
                           "nb_code_prompt_hide": "Masquer la cellule de code"}}
#: Pages of the instructor edition only (besides solutions/).
INSTRUCTOR_PAGES = ("chapters/instructors",)
FLAGS = ["-W", "-n", "--keep-going"]


def build_base() -> pathlib.Path:
    """Folder whose ``_build/`` receives the books (``COURSE_BUILD_DIR``, default the repository)."""
    return pathlib.Path(os.environ.get("COURSE_BUILD_DIR") or ROOT).resolve()


def html_dir(edition: str = "instructor", base: pathlib.Path | None = None, lang: str = "en") -> pathlib.Path:
    """Where ``edition``'s HTML in ``lang`` is written."""
    base = base or build_base()
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    if edition == "instructor":
        return base / "_build" / "html" if lang == "en" else base / "_build" / lang / "_build" / "html"
    if edition == "student":
        name = "student" if lang == "en" else f"student-{lang}"
        return base / "_build" / name / "_build" / "html"
    raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")


def other_language_roots(edition: str, lang: str) -> dict[str, str]:
    """{language: relative URL from this edition's HTML root to the same edition in that
    language}, for the link on every page to the other language."""
    here = html_dir(edition, pathlib.Path("/"), lang)
    return {other: os.path.relpath(html_dir(edition, pathlib.Path("/"), other), here).replace(os.sep, "/")
            for other in LANGUAGES if other != lang}


def absolute_extensions(cfg: dict) -> dict:
    """``local_extensions`` paths are relative to the config file: make them absolute, for a
    config written elsewhere."""
    sphinx = cfg.setdefault("sphinx", {})
    for name, path in (sphinx.get("local_extensions") or {}).items():
        sphinx["local_extensions"][name] = str((ROOT / path).resolve())
    return cfg


def student_config(config: dict) -> dict:
    """The student edition's settings, derived from the instructor ``_config.yml`` (or from a
    student copy's, which already has them: ``bash .ci/student-repo``)."""
    cfg = absolute_extensions(copy.deepcopy(config))
    title = cfg.get("title", "Book")
    cfg["title"] = title if title.endswith(STUDENT_SUFFIX["en"]) else f"{title}{STUDENT_SUFFIX['en']}"
    cfg["sphinx"].setdefault("config", {})["hide_solutions"] = True
    return cfg


def language_config(config: dict, lang: str) -> dict:
    """The settings of the edition in ``lang`` (``config`` is the English one): Sphinx's
    ``language``, the translated title. The catalogues (``locale_dirs``, one per page:
    ``gettext_compact: false``) are set in ``_config.yml`` itself."""
    cfg = absolute_extensions(copy.deepcopy(config))
    if lang == "en":
        return cfg
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    student = cfg["title"].endswith(STUDENT_SUFFIX["en"])
    cfg["title"] = TITLES[lang] + (STUDENT_SUFFIX[lang] if student else "")
    cfg["author"] = AUTHORS[lang]
    sphinx_config = cfg["sphinx"].setdefault("config", {})
    sphinx_config["language"] = lang
    sphinx_config.update(NOTEBOOK_PROMPTS[lang])
    # « Kudo et Richardson, 2018 »: the styles utils/book/french_citations.py registers
    sphinx_config.update(bibtex_reference_style="author_year_fr", bibtex_default_style="alpha_fr")
    return cfg


def language_toc(toc: dict, lang: str) -> dict:
    """The table of contents with its part captions translated (Sphinx translates the pages'
    titles itself, but not the captions, which sphinx-external-toc adds after it), from the
    catalogue of the root page."""
    if lang == "en":
        return toc
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_translations", pathlib.Path(__file__).with_name("translations.py"))
    translations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(translations)
    po = LOCALES / lang / "LC_MESSAGES" / f"{toc['root']}.po"
    table = {m.id: m.string for m in translations.entries(translations.read_catalog(po)) if m.string and not m.fuzzy}
    toc = copy.deepcopy(toc)
    for part in toc.get("parts", []):
        if "caption" in part:
            part["caption"] = table.get(part["caption"], part["caption"])
    return toc


def student_toc(toc: dict) -> dict:
    """The instructor ``_toc.yml`` without any ``solutions/`` page, without the instructors'
    page (``INSTRUCTOR_PAGES``), and without the parts this empties."""

    def keep(entries):
        out = []
        for e in entries:
            if str(e.get("file", "")).startswith("solutions/") or e.get("file") in INSTRUCTOR_PAGES:
                continue
            e = dict(e)
            for key in ("sections", "chapters"):
                if key in e:
                    e[key] = keep(e[key])
            out.append(e)
        return out

    toc = copy.deepcopy(toc)
    if "parts" in toc:
        parts = []
        for part in toc["parts"]:
            part = dict(part, chapters=keep(part.get("chapters", [])))
            if part["chapters"]:
                parts.append(part)
        toc["parts"] = parts
    for key in ("chapters", "sections"):
        if key in toc:
            toc[key] = keep(toc[key])
    return toc


def command(edition: str, extra=(), base: pathlib.Path | None = None, lang: str = "en") -> list[str]:
    """The ``jupyter-book build`` command line for ``edition`` in ``lang`` (writes the
    generated ``_config.yml`` and ``_toc.yml`` of any edition but the English instructor one)."""
    base = base or build_base()
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    jb = [os.path.join(os.path.dirname(sys.executable), "jupyter-book"), "build", str(ROOT), *FLAGS]
    if edition == "instructor" and lang == "en":
        return jb + ([] if base == ROOT else ["--path-output", str(base)]) + list(extra)
    out = html_dir(edition, base, lang).parent.parent
    out.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    if edition == "student":
        config, toc = student_config(config), student_toc(toc)
    config, toc = language_config(config, lang), language_toc(toc, lang)
    (out / "_config.yml").write_text(
        "# Generated by utils/book/editions.py from _config.yml: do not edit.\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (out / "_toc.yml").write_text(
        "# Generated by utils/book/editions.py from _toc.yml: do not edit.\n"
        + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return jb + ["--config", str(out / "_config.yml"), "--toc", str(out / "_toc.yml"),
                 "--path-output", str(out)] + list(extra)


def main(argv: list[str]) -> int:
    edition, lang = "instructor", "en"
    while argv and not argv[0].startswith("-"):
        word, argv = argv[0], argv[1:]
        if word in EDITIONS:
            edition = word
        elif word in LANGUAGES:
            lang = word
        else:
            print(f"usage: bash .ci/build [{'|'.join(EDITIONS)}] [{'|'.join(LANGUAGES)}] [jupyter-book options];"
                  f" got {word!r}", file=sys.stderr)
            return 2
    rc = subprocess.call(command(edition, argv, lang=lang), cwd=ROOT)
    if rc == 0:
        # A student copy (bash .ci/student-repo) has no solutions/: its default book is the student one.
        label = edition if (ROOT / "solutions").is_dir() else "student"
        print(f"{label} edition ({lang}): {html_dir(edition, lang=lang) / 'index.html'}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
