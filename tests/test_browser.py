"""The built book works in a real browser (Debian's Chromium, driven by Playwright).

The instructor edition is served on localhost and every page of the table of contents
is opened: the math must be typeset by MathJax (the CDN is unreachable in CI, so its
requests are answered from a local copy of ``mathjax@3`` fetched once with ``npm pack``
into a cache outside the repository), every image must load and have alt text, the
Colab and Kaggle links must open this page's notebook in the configured repository,
every same-site link must resolve (no 404, and its ``#anchor`` must exist), and the
search page must find "positional". Two chapter pages are photographed into a
temporary folder (``COURSE_SCREENSHOT_DIR`` to choose it) for a person to look at.

Needs: ``apt-get install chromium`` (``bash .ci/test`` installs it when run as root),
the ``playwright`` Python package (requirements.txt; its own browser download is not
used), and ``npm`` or a cached copy of MathJax (``COURSE_MATHJAX_DIR``). Without
Chromium or npm the tests are skipped with the reason.
"""

from __future__ import annotations

import functools
import http.server
import os
import pathlib
import shutil
import subprocess
import tarfile
import tempfile
import threading
import urllib.error
import urllib.request
from urllib.parse import urldefrag, urlparse

import pytest
from bookbuild import COLAB, HTML, KAGGLE, expected_links, notebook_pages
from notebooks import ROOT, toc_files

MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3/"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOT_PAGES = ["chapters/02_scaled_dot_product_attention", "chapters/07_positional_encoding"]
KNOWN_PAGE_ERRORS = ("THEBE_JS_URL",)  # sphinx-thebe declares its config twice: harmless


def chromium_path() -> str | None:
    for cand in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


@pytest.fixture(scope="module")
def mathjax_dir():
    """A local copy of the mathjax@3 npm package (its ``es5/`` is what the CDN serves)."""
    cache = pathlib.Path(os.environ.get("COURSE_MATHJAX_DIR")
                         or pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache"))
                         / "aiayn-course" / "mathjax3")
    if (cache / "es5" / "tex-mml-chtml.js").is_file():
        return cache
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed, and no cached MathJax in " + str(cache))
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([npm, "pack", "--silent", "mathjax@3"], cwd=tmp, capture_output=True, text=True)
        tgz = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 and proc.stdout.strip() else ""
        if not tgz:
            pytest.skip(f"npm pack mathjax@3 failed: {proc.stderr.strip()[-300:]}")
        unpacked = pathlib.Path(tmp) / "unpacked"
        with tarfile.open(pathlib.Path(tmp) / tgz) as tar:
            tar.extractall(unpacked, filter="data")
        cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(cache, ignore_errors=True)
        shutil.move(str(unpacked / "package"), cache)
    return cache


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the browser drops connections when it leaves a page; not a failure


@pytest.fixture(scope="module")
def site(built_book):
    """The built book served on a free localhost port: its base URL."""
    assert (HTML / "chapters").is_dir(), f"no built book in {HTML}"
    server = _Server(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
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
  const math = [...document.querySelectorAll('article .math')];
  if (math.length) {
    const t0 = Date.now();
    while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) && Date.now() - t0 < 30000)
      await new Promise(r => setTimeout(r, 100));
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  }
  const imgs = [...document.images];
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  return {
    mathjax: !!(window.MathJax && MathJax.version),
    math: math.length,
    unrendered: math.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80)),
    math_errors: math.filter(m => m.querySelector('mjx-merror')).map(m => m.textContent.slice(0, 80)),
    images: imgs.map(i => ({src: i.currentSrc || i.src, width: i.naturalWidth, alt: (i.getAttribute('alt') || '').trim()})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  };
}"""


def offline_route(site, mathjax_dir, external, also_allow=()):
    """A Playwright route handler: pages of ``site`` (and URLs starting with ``also_allow``)
    load; MathJax's CDN is answered from ``mathjax_dir``; any other request is aborted
    and its URL (without the query) added to the set ``external``."""

    def route(r):
        url = r.request.url
        if url.startswith((site, *also_allow)):
            return r.continue_()
        if url.startswith(MATHJAX_CDN):
            local = mathjax_dir / urlparse(url).path.split("/mathjax@3/", 1)[1]
            if local.is_file():
                return r.fulfill(path=str(local))
        external.add(url.split("?")[0])
        return r.abort()

    return route


@pytest.fixture(scope="module")
def crawl(browser, site, mathjax_dir, screenshot_dir):
    """Open every toc page once; {page name: report} plus what went wrong on the way."""
    external, failed, errors = set(), [], []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.route("**/*", offline_route(site, mathjax_dir, external))
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    page.on("response", lambda resp: failed.append(f"{resp.status} {resp.url}")
            if resp.url.startswith(site) and resp.status >= 400 else None)
    reports = {}
    for name in toc_files():
        page.goto(site + f"{name}.html", wait_until="load", timeout=60000)
        reports[name] = page.evaluate(PAGE_REPORT)
        if name in SCREENSHOT_PAGES:
            page.screenshot(path=str(screenshot_dir / f"{name.replace('/', '_')}.png"), full_page=True)
            page.screenshot(path=str(screenshot_dir / f"{name.replace('/', '_')}_top.png"))
    print(f"\nscreenshots in {screenshot_dir}; external requests blocked: {sorted(external)}")
    yield {"pages": reports, "failed": failed, "errors": errors, "site": site, "page": page}
    context.close()


def test_math_is_typeset(crawl):
    bad = []
    for name, r in crawl["pages"].items():
        if r["math"] and not r["mathjax"]:
            bad.append(f"{name}: MathJax did not load")
        bad += [f"{name}: not typeset: {m!r}" for m in r["unrendered"]]
        bad += [f"{name}: TeX error in: {m!r}" for m in r["math_errors"]]
    assert not bad, "\n".join(bad[:30])
    assert sum(r["math"] for r in crawl["pages"].values()) > 0, "no math found in the book at all"


def test_images_load_and_have_alt_text(crawl):
    bad = []
    for name, r in crawl["pages"].items():
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
    ids = {site + f"{name}.html": set(r["ids"]) for name, r in pages.items()}
    targets = {h for r in pages.values() for h in r["links"] if h.startswith(site)}
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


def test_no_javascript_errors(crawl):
    errors = [e for e in crawl["errors"] if not any(k in e for k in KNOWN_PAGE_ERRORS)]
    assert not errors, "\n".join(errors)


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
