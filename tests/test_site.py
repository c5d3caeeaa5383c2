"""The published site (``bash .ci/site DIR``, what ``.github/workflows/publish.yml`` deploys) works.

The site is assembled from this run's builds of the English and French editions (``--no-build``;
``publish.yml`` lets the command build them). Then:

- every relative link, image, script and stylesheet of every page resolves to a file of the site;
- every page of the book exists in both languages, and each page's language link (and its
  ``<link rel="alternate" hreflang>``) leads to the same page in the other language;
- every page of the book, in both languages, opens in Chromium from the site served on
  127.0.0.1, and the pages ``test_browser.FILE_PAGES`` (one of each kind, as there) from disk
  (``file://``), with no console error, no uncaught exception, no failed request and no
  request leaving the machine.
"""

from __future__ import annotations

import functools
import html
import re
import subprocess
import threading
from urllib.parse import unquote, urlsplit

import pytest
import test_browser
from notebooks import ROOT, toc_files
from test_browser import FILE_PAGES, _QuietHandler, _Server, open_every_page

LANGS = {"en": "", "fr": "fr/"}


@pytest.fixture(scope="module")
def site(built_book, french_book, tmp_path_factory):
    """The folder ``bash .ci/site DIR --no-build`` writes from this run's two builds."""
    assert built_book[0] == 0 and french_book[0] == 0, "the editions did not build"
    target = tmp_path_factory.mktemp("site") / "site"
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "site"), str(target), "--no-build"], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / "index.html").is_file() and (target / "fr" / "index.html").is_file() and (target / ".nojekyll").is_file()
    return target


def pages(site):
    return sorted(p for p in site.rglob("*.html") if not {"_static", "_sources", "_images"} & set(p.relative_to(site).parts))


# The href and src attributes of a page's tags (a regular expression: BeautifulSoup takes half a minute
# over the site's pages; the built HTML always quotes its attributes with double quotes).
URL_ATTRIBUTE = re.compile(r'<(?:a|link|img|script)\b[^>]*?\s(?:href|src)="([^"]*)"')


def local_targets(page):
    """(attribute value, resolved path) of each relative URL the page loads or links to."""
    for url in URL_ATTRIBUTE.findall(page.read_text(encoding="utf-8")):
        url = html.unescape(url)
        if not url or url.startswith(("#", "mailto:", "data:", "javascript:")) or urlsplit(url).scheme:
            continue
        path = unquote(urlsplit(url).path)
        target = (page.parent / path).resolve() if path else page
        yield url, target / "index.html" if url.endswith("/") else target


def test_every_relative_link_of_the_site_resolves(site):
    broken = [f"{p.relative_to(site)}: {url}" for p in pages(site) for url, target in local_targets(p)
              if not target.is_file()]
    assert not broken, f"{len(broken)} broken link(s):\n  " + "\n  ".join(broken[:30])


def test_every_page_links_to_its_counterpart_in_the_other_language(site):
    problems = []
    for name in toc_files():
        for lang, prefix in LANGS.items():
            other = "fr" if lang == "en" else "en"
            page = site / f"{prefix}{name}.html"
            if not page.is_file():
                problems.append(f"{prefix}{name}.html is missing")
                continue
            text = page.read_text(encoding="utf-8")
            hrefs = re.findall(r'<a class="course-language-link" href="([^"]*)" hreflang="' + other + '"', text)
            hrefs += re.findall(r'<link rel="alternate" hreflang="' + other + r'" href="([^"]*)"', text)
            want = (site / f"{LANGS[other]}{name}.html").resolve()
            if len(hrefs) != 2 or any((page.parent / h).resolve() != want for h in hrefs):
                problems.append(f"{prefix}{name}.html: language links {hrefs}, expected {want.relative_to(site)}")
    assert not problems, "\n".join(problems)


browser = test_browser.browser  # one Chromium per module, launched as tests/test_browser.py launches it


@pytest.fixture(scope="module")
def served(site):
    server = _Server(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("how", ["http", "file"])
def test_every_page_opens_cleanly_in_both_languages(site, served, browser, tmp_path, how, lang):
    base = (served if how == "http" else site.as_uri() + "/") + LANGS[lang]
    context, result = open_every_page(browser, base, tmp_path, names=toc_files() if how == "http" else FILE_PAGES)
    context.close()
    assert not result["errors"], "\n".join(result["errors"][:20])
    assert not result["failed"], "\n".join(result["failed"][:20])
    assert not result["external"], sorted(result["external"])


def test_the_link_check_sees_a_broken_link_and_a_moved_language_link(tmp_path):
    """The checks above can fail: a link to a missing file is found, and the build folders' language
    link is rewritten to the site's layout (and nothing else is)."""
    (tmp_path / "a.html").write_text('<a href="b.html#x">b</a> <img src="_images/c.png"> <a href="https://x.org/">x</a>')
    (tmp_path / "b.html").write_text("")
    assert [(u, t.is_file()) for u, t in local_targets(tmp_path / "a.html")] == [("b.html#x", True),
                                                                                ("_images/c.png", False)]
    import importlib.util
    spec = importlib.util.spec_from_file_location("publish_site", ROOT / "utils" / "book" / "publish_site.py")
    publish_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(publish_site)
    page = ('<link rel="alternate" hreflang="fr" href="../../fr/_build/html/chapters/02_x.html" />'
            '<a class="course-language-link" href="../../fr/_build/html/chapters/02_x.html" hreflang="fr" lang="fr">'
            '<a href="../_static/x.css">')
    assert publish_site.rewrite_language_links(page, "en") == page.replace("../../fr/_build/html/", "../fr/")
    fr = '<a class="course-language-link" href="../../../../html/chapters/02_x.html" hreflang="en" lang="en">'
    assert publish_site.rewrite_language_links(fr, "fr") == fr.replace("../../../../html/", "../../")
