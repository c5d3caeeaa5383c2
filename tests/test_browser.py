"""The built book works in a real browser (Debian's Chromium, driven by Playwright).

Every page of the table of contents is opened, with every request that would leave the
machine aborted (and none expected), from the book served on 127.0.0.1; a sample of them
(``FILE_PAGES``) is opened again from disk (``file://``), as a reader without a network
would open it. Both times every math element
on the page (the article and the contents sidebars) must be typeset by the MathJax the book
ships (``utils/book/offline_math.py``): MathJax loaded and finished, every element rendered
without a TeX error, and no TeX delimiter left in the page's text. The images must load and
have alt text, and no page may raise a JavaScript error or write an error to the console. On the served book the Colab and
Kaggle links must open this page's notebook in the configured repository, every same-site
link must resolve (no 404, and its ``#anchor`` must exist), and the search page must find
"positional", and on each page, measured at a laptop's and then a phone's width, no output
may be cut (``tests/layout_measure.py`` says what that means) and no two cells of a table may
run together. Chapter pages are photographed into a temporary folder
(``COURSE_SCREENSHOT_DIR`` to choose it) for a person to look at.

Needs: ``apt-get install chromium`` (``bash .ci/test`` installs it when run as root) and
the ``playwright`` Python package (requirements.txt; its own browser download is not
used). Without them the tests are skipped with the reason.
"""

from __future__ import annotations

import functools
import http.server
import os
import pathlib
import shutil
import threading
import urllib.error
import urllib.request
from urllib.parse import urldefrag

import pytest
from bookbuild import COLAB, FR_HTML, HTML, KAGGLE, expected_links, notebook_pages
from layout_measure import DESKTOP, GAP_PX, MEASURE, PHONE, summary
from notebooks import ROOT, toc_files

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOT_PAGES = ["chapters/02_scaled_dot_product_attention", "chapters/07_positional_encoding"]
# The pages opened from disk: the start page, the preface, every page with an interactive
# figure or a formula-heavy derivation, the last chapter, a solution page and the
# instructors' page. What can fail from file:// (a relative path, a script that fetches
# a file) is the same on every page of a folder and every page of one kind; opening the
# other 23 pages again from disk took about 14 s more and found nothing that the served
# crawl misses.
FILE_PAGES = ["chapters/index", "chapters/00_preface", "chapters/02_scaled_dot_product_attention",
              "chapters/07_positional_encoding", "chapters/09_why_self_attention", "chapters/10_training",
              "chapters/11_results", "chapters/15_g2p", "chapters/references",
              "solutions/02_scaled_dot_product_attention_solutions", "chapters/instructors"]
# A student copy of the course (`bash .ci/student-repo`) has no solution pages and no instructors' page.
FILE_PAGES = [p for p in FILE_PAGES if p in toc_files() or not p.startswith(("solutions/", "chapters/instructors"))]


def chromium_path() -> str | None:
    for cand in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the browser drops connections when it leaves a page; not a failure


@pytest.fixture(scope="module")
def site(built_book, french_book):
    """The built book served on a free localhost port: its base URL. The server's root is the
    ``_build`` folder that holds every edition, so that each page's link to the same page in
    French (``../fr/_build/html/...``) resolves as on a published site."""
    assert (HTML / "chapters").is_dir(), f"no built book in {HTML}"
    root = HTML.parent
    server = _Server(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{HTML.relative_to(root).as_posix()}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -r requirements.txt)")
    exe = chromium_path()
    if exe is None:
        pytest.skip("Chromium is not installed (apt-get install chromium chromium-driver; bash .ci/test does it as root)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def screenshot_dir(tmp_path_factory):
    d = os.environ.get("COURSE_SCREENSHOT_DIR")
    path = pathlib.Path(d) if d else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


PAGE_REPORT = """async () => {
  // Every math element on the page: the article's and the contents sidebars' (titles with math).
  const math = [...document.querySelectorAll('.math')];
  // MathJax's script is deferred, so by the load event it has run (or failed to load);
  // its startup promise resolves once the page is typeset.
  const mj = window.MathJax && MathJax.startup && MathJax.startup.promise ? MathJax : null;
  const finished = mj ? await Promise.race([mj.startup.promise.then(() => true),
                                            new Promise(r => setTimeout(() => r(false), 60000))]) : false;
  // Text that still reads as TeX: a delimiter outside typeset math, code and scripts.
  const skip = 'mjx-container, pre, code, script, style, textarea';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode())
    if (/\\\\[()\\[\\]]|\\$\\$|\\\\begin\\{/.test(n.data) && !n.parentElement.closest(skip))
      raw.push(n.data.trim().slice(0, 80));
  const imgs = [...document.images];
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  return {
    mathjax: mj ? mj.version : null,
    finished: finished,
    math: math.length,
    unrendered: math.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80)),
    math_errors: math.filter(m => m.querySelector('mjx-merror')).map(m => m.textContent.slice(0, 80)),
    raw_tex: raw,
    images: imgs.map(i => ({src: i.currentSrc || i.src, width: i.naturalWidth, alt: (i.getAttribute('alt') || '').trim()})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  };
}"""


def offline_route(site, external, also_allow=()):
    """A Playwright route handler for a machine with no network: URLs under ``site``
    (the served book's base URL, or the built folder's ``file://`` URL) and those starting
    with ``also_allow`` load; any other request is aborted and its URL (without the
    query) added to the set ``external``. Nothing answers for a CDN: MathJax must come
    from the book itself."""

    def route(r):
        url = r.request.url
        if url.startswith((site, *also_allow)):
            return r.continue_()
        external.add(url.split("?")[0])
        return r.abort()

    return route


def watch_errors(page, errors: list) -> None:
    """Append to ``errors`` each uncaught exception and each console error of ``page``,
    with the page's address: a reader's console must stay clean on every page."""
    page.on("pageerror", lambda e: errors.append(f"{page.url}: uncaught {e}"))
    page.on("console", lambda msg: errors.append(f"{page.url}: console error: {msg.text}")
            if msg.type == "error" else None)


def open_every_page(browser, base, screenshot_dir, suffix="", layout=False, names=None):
    """Open every toc page (or the pages ``names``) under ``base`` once, offline; {page name:
    report} plus what went wrong on the way. Screenshots of SCREENSHOT_PAGES are named with ``suffix``.
    With ``layout``, each page's output blocks are also measured (``layout_measure.MEASURE``)
    at 1280 px and, after resizing the same page, at 390 px: {"desktop": {page: ...},
    "phone": {page: ...}} under "layout"."""
    external, failed, errors = set(), [], []
    context = browser.new_context(viewport=DESKTOP)
    context.route("**/*", offline_route(base, external))
    page = context.new_page()
    watch_errors(page, errors)
    page.on("response", lambda resp: failed.append(f"{resp.status} {resp.url}")
            if resp.url.startswith(base) and resp.status >= 400 else None)
    # From file:// a missing file is a failed request, not a 404 response (requests cut short
    # by leaving the page, ERR_ABORTED, are not failures).
    page.on("requestfailed", lambda req: failed.append(f"{req.failure} {req.url}")
            if base.startswith("file:") and req.url.startswith(base) and "ERR_ABORTED" not in (req.failure or "")
            else None)
    reports, measured = {}, {"desktop": {}, "phone": {}}
    for name in toc_files() if names is None else names:
        page.goto(base + f"{name}.html", wait_until="load", timeout=60000)
        reports[name] = page.evaluate(PAGE_REPORT)
        if name in SCREENSHOT_PAGES:
            stem = name.replace("/", "_") + suffix
            page.screenshot(path=str(screenshot_dir / f"{stem}.png"), full_page=True)
            page.screenshot(path=str(screenshot_dir / f"{stem}_top.png"))
        if layout:
            measured["desktop"][name] = page.evaluate(MEASURE)
            page.set_viewport_size(PHONE)
            measured["phone"][name] = page.evaluate(MEASURE)
            page.set_viewport_size(DESKTOP)
    print(f"\n{base}: screenshots in {screenshot_dir}; external requests blocked: {sorted(external)}")
    return context, {"pages": reports, "failed": failed, "errors": errors, "external": external,
                     "site": base, "page": page, "layout": measured}


@pytest.fixture(scope="module")
def crawl(browser, site, screenshot_dir):
    """Every toc page of the served book, opened once and measured at two widths (see ``open_every_page``)."""
    context, result = open_every_page(browser, site, screenshot_dir, layout=True)
    yield result
    context.close()


@pytest.fixture(scope="module")
def crawl_file(browser, built_book, screenshot_dir):
    """The pages ``FILE_PAGES`` opened from disk (``file://``), as a reader with no server and no network."""
    assert (HTML / "chapters").is_dir(), f"no built book in {HTML}"
    assert set(FILE_PAGES) <= set(toc_files()), f"not in the table of contents: {set(FILE_PAGES) - set(toc_files())}"
    context, result = open_every_page(browser, HTML.as_uri() + "/", screenshot_dir, suffix="_file",
                                      names=FILE_PAGES)
    yield result
    context.close()


@pytest.fixture(scope="module")
def crawl_file_fr(browser, french_book, screenshot_dir):
    """The French edition's pages ``FILE_PAGES`` opened from disk (``bash .ci/build fr``)."""
    assert french_book[0] == 0, french_book[1][-3000:]
    context, result = open_every_page(browser, FR_HTML.as_uri() + "/", screenshot_dir, suffix="_fr_file",
                                      names=FILE_PAGES)
    yield result
    context.close()


# The checks that run on the served book, the book opened from disk and the French edition opened from disk.
BOTH = pytest.mark.parametrize("crawled", ["crawl", "crawl_file", "crawl_file_fr"])


@BOTH
def test_math_is_typeset(crawled, request):
    """Every math element of every page is typeset by the book's own MathJax 3, offline."""
    pages = request.getfixturevalue(crawled)["pages"]
    bad = []
    for name, r in pages.items():
        if r["math"] and not r["mathjax"]:
            bad.append(f"{name}: MathJax did not load ({r['math']} math elements left as TeX)")
            continue
        if r["math"] and not r["finished"]:
            bad.append(f"{name}: MathJax did not finish typesetting within 60 s")
        if r["mathjax"] and not r["mathjax"].startswith("3."):
            bad.append(f"{name}: MathJax {r['mathjax']}, expected the shipped 3.x")
        bad += [f"{name}: not typeset: {m!r}" for m in r["unrendered"]]
        bad += [f"{name}: TeX error in: {m!r}" for m in r["math_errors"]]
        bad += [f"{name}: raw TeX in the page's text: {t!r}" for t in r["raw_tex"]]
    assert not bad, "\n".join(bad[:30])
    assert sum(r["math"] for r in pages.values()) > 0, "no math found in the book at all"


@BOTH
def test_nothing_leaves_the_machine(crawled, request):
    """No page asks another host for anything (a CDN, a font service): the book reads offline."""
    result = request.getfixturevalue(crawled)
    assert not result["external"], f"requests to other hosts: {sorted(result['external'])}"


@BOTH
def test_images_load_and_have_alt_text(crawled, request):
    bad = []
    for name, r in request.getfixturevalue(crawled)["pages"].items():
        for img in r["images"]:
            if img["width"] == 0:
                bad.append(f"{name}: image did not load: {img['src']}")
            if not img["alt"]:
                bad.append(f"{name}: image without alt text: {img['src']}")
    assert not bad, "\n".join(bad)


def test_colab_and_kaggle_links_open_the_pages_notebook(crawl):
    for name in notebook_pages():
        links = crawl["pages"][name]["links"]
        colab = [h for h in links if h.startswith(COLAB)]
        kaggle = [h for h in links if h.startswith(KAGGLE)]
        assert (colab, kaggle) == tuple([want] for want in expected_links(name)), f"{name}: {colab} {kaggle}"
        assert (ROOT / f"{name}.ipynb").is_file()


def test_same_site_links_resolve(crawl):
    site, pages = crawl["site"], crawl["pages"]
    server = site[:site.index("/", len("http://"))] + "/"  # the other editions are served too
    ids = {site + f"{name}.html": set(r["ids"]) for name, r in pages.items()}
    targets = {h for r in pages.values() for h in r["links"] if h.startswith(server)}
    assert any("/fr/" in h for h in targets), "no page links to its French translation"
    bad = list(crawl["failed"])
    for url in sorted({urldefrag(h)[0] for h in targets}):
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                if resp.status != 200:
                    bad.append(f"{resp.status} {url}")
        except urllib.error.HTTPError as e:
            bad.append(f"{e.code} {url}")
    for h in sorted(targets):
        page_url, frag = urldefrag(h)
        if frag and page_url in ids and frag not in ids[page_url]:
            bad.append(f"missing anchor #{frag} in {page_url}")
    assert not bad, "broken same-site links:\n" + "\n".join(bad)


@BOTH
def test_no_javascript_errors_or_missing_files(crawled, request):
    result = request.getfixturevalue(crawled)
    assert not result["errors"], "\n".join(result["errors"])
    if crawled == "crawl_file":  # on the served book, test_same_site_links_resolve reports these
        assert not result["failed"], "files missing from the book:\n" + "\n".join(result["failed"])


def test_search_finds_positional(crawl):
    page = crawl["page"]
    page.goto(crawl["site"] + "search.html?q=positional", wait_until="load")
    page.wait_for_function("document.querySelectorAll('#search-results ul.search li').length > 0", timeout=30000)
    hits = page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(a => a.href)")
    assert any("07_positional_encoding" in h for h in hits), f"search for 'positional' found {hits}"


def test_screenshots_were_taken(crawl, screenshot_dir):
    for name in SCREENSHOT_PAGES:
        if name in crawl["pages"]:
            shot = screenshot_dir / f"{name.replace('/', '_')}.png"
            assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot of {name}"


def test_no_output_is_cut_at_1280_px(crawl):
    desktop = crawl["layout"]["desktop"]
    assert sum(r["outputs"] for r in desktop.values()) > 100, "found almost no outputs: has the HTML changed?"
    text = summary(desktop, DESKTOP)
    print("\n" + text)
    assert not any(r["cut"] or r["page_overflow"] for r in desktop.values()), text


def test_table_columns_never_run_together(crawl):
    """In every table of every page, at 1280 px, the texts of two cells side by side are at
    least ``GAP_PX`` apart (before the tables had padding: 2 px, "018,000" for seed 0 beside
    18,000 steps)."""
    desktop = crawl["layout"]["desktop"]
    tables = sum(r["tables"] for r in desktop.values())
    assert tables > 50, f"found only {tables} tables: has the HTML changed?"
    narrowest = min(r["narrowest_gap"] for r in desktop.values() if r["narrowest_gap"] is not None)
    print(f"\n{tables} tables; the narrowest gap between two cells' texts: {narrowest:.1f} px")
    close = {name: r["close"] for name, r in desktop.items() if r["close"]}
    assert not close, f"cells closer than {GAP_PX} px: {close}"


def test_no_page_scrolls_sideways_on_a_phone(crawl):
    """At 390 px the cut blocks are counted and printed (a phone cannot show every row),
    and each scrolls inside its own box: the page itself never scrolls sideways."""
    phone = crawl["layout"]["phone"]
    text = summary(phone, PHONE)
    print("\n" + text)
    assert sum(r["outputs"] for r in phone.values()) > 100
    assert not any(r["page_overflow"] for r in phone.values()), text


def test_no_code_line_is_hidden_at_1280_px(crawl):
    """Every line of every code cell shows in full at 1280 px: long lines wrap at the column's
    edge (utils/book/static/course_book.css). Before, chapter 16's import cell ran past the
    right edge behind a scrollbar that overlay-scrollbar systems show only while scrolling."""
    desktop = crawl["layout"]["desktop"]
    hidden = {name: r["code_clipped"] for name, r in desktop.items() if r["code_clipped"]}
    assert not hidden, f"code lines running past their box: {hidden}"


def test_no_table_cell_breaks_inside_a_word_at_1280_px(crawl):
    """A table's header or cell may wrap, but only between words or after a hyphen or slash
    ("test WER, %" must never split its words)."""
    desktop = crawl["layout"]["desktop"]
    broken = {name: r["broken_words"] for name, r in desktop.items() if r["broken_words"]}
    assert not broken, f"words split across lines in table cells: {broken}"
