"""Build the published site: both languages of the book in one folder (``bash .ci/site DIR``).

    bash .ci/site DIR              # DIR/ holds the English book, DIR/fr/ the French one
    bash .ci/site DIR --no-build   # the same from the editions already built (the tests use it)

It builds the English and the French edition exactly as ``bash .ci/build`` and ``bash .ci/build
fr`` do (``editions.command``; the same ``COURSE_BUILD_DIR``, so a second run only rebuilds what
changed), then copies the English HTML to DIR and the French HTML to DIR/fr. In the editions'
own folders each page's link to the other language (``course_book.add_language_link``) goes
from ``_build/html`` to ``_build/fr/_build/html``; on the site it goes from DIR to DIR/fr, so
those links (the visible one and the ``<link rel="alternate">`` of the page's head) are
rewritten to the site's layout, and nothing else is touched. DIR also gets an empty
``.nojekyll`` (GitHub Pages would otherwise skip the folders whose names start with ``_``).

In the course's repository the editions are the instructor ones (solutions shown); in a student
copy (``bash .ci/student-repo``), whose default book is the student edition, they are the
student ones. ``.github/workflows/publish.yml`` runs this command and deploys DIR to GitHub Pages.

Exit status 2 with a message: DIR exists and is not empty, or (``--no-build``) an edition is missing;
1: a book build failed.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
USAGE = "bash .ci/site DIR"
#: Where each language lives on the site, relative to DIR.
SITE_ROOTS = {"en": ".", "fr": "fr"}


def _editions():
    spec = importlib.util.spec_from_file_location("course_editions", pathlib.Path(__file__).with_name("editions.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def site_link_root(lang: str, other: str) -> str:
    """Relative URL from the site root of ``lang`` to that of ``other`` (``"fr"``, ``".."``)."""
    return os.path.relpath(SITE_ROOTS[other], SITE_ROOTS[lang]).replace(os.sep, "/")


def rewrite_language_links(html: str, lang: str, edition: str = "instructor") -> str:
    """``html`` (a page of ``edition`` in ``lang``) with its links to the other language pointing
    into the site's layout instead of the build folders'. Only the course's language link and
    the ``hreflang`` alternate link lead out of an edition's folder into the other's, and only
    they change."""
    editions = _editions()
    for other, root in editions.other_language_roots(edition, lang).items():
        new = site_link_root(lang, other)
        # href="<../ for the page's depth><root>/<page>.html": only these links leave the edition's folder so
        pattern = re.compile(r'(\bhref=")((?:\.\./)*?)' + re.escape(root + "/"))
        html = pattern.sub(lambda m, new=new: m.group(1) + m.group(2) + new + "/", html)
    return html


def build(target: pathlib.Path, log=print, rebuild: bool = True) -> None:
    """Build both languages (unless ``rebuild`` is false) and assemble them in ``target`` (see the
    module's docstring).

    Raises:
        FileExistsError: ``target`` exists and is not empty.
        FileNotFoundError: without ``rebuild``, an edition has not been built.
        subprocess.CalledProcessError: a book build failed.
    """
    editions = _editions()
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} exists and is not empty: give a new folder (the site is written from scratch)")
    for lang in editions.LANGUAGES:
        if rebuild:
            log(f"building the {lang} edition")
            subprocess.run(editions.command("instructor", lang=lang), cwd=ROOT, check=True)
        elif not (editions.html_dir("instructor", lang=lang) / "index.html").is_file():
            raise FileNotFoundError(f"no {lang} edition in {editions.html_dir('instructor', lang=lang)}: "
                                    f"run `bash .ci/build{' ' + lang if lang != 'en' else ''}` or drop --no-build")
    for lang in editions.LANGUAGES:
        source = editions.html_dir("instructor", lang=lang)
        dest = target / SITE_ROOTS[lang]
        shutil.copytree(source, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".buildinfo"))
        for page in dest.rglob("*.html"):
            if lang == "en" and page.is_relative_to(target / SITE_ROOTS["fr"]):
                continue
            text = page.read_text(encoding="utf-8")
            new = rewrite_language_links(text, lang)
            if new != text:
                page.write_text(new, encoding="utf-8")
    (target / ".nojekyll").write_text("")
    log(f"site: {target / 'index.html'} (English), {target / SITE_ROOTS['fr'] / 'index.html'} (French)")


def main(argv: list[str]) -> int:
    rebuild = "--no-build" not in argv
    args = [a for a in argv if a != "--no-build"]
    if len(args) != 1 or args[0].startswith("-"):
        print(f"usage: {USAGE} [--no-build]; got {' '.join(argv) or 'no arguments'}", file=sys.stderr)
        return 2
    try:
        build(pathlib.Path(args[0]).resolve(), rebuild=rebuild)
    except (FileExistsError, FileNotFoundError) as e:
        print(e, file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"a book build failed (exit status {e.returncode}): {' '.join(e.cmd[:3])} ...", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
