"""Every notebook page of the built book opens its own .ipynb in Colab and in Kaggle.

Both links are derived from ``_config.yml`` ``repository.url`` and ``repository.branch``
(the theme makes the Colab one, ``utils/book/course_book.py`` the Kaggle one); this
test reads them back from the HTML and checks that each names the configured
repository and a notebook that exists in it.
"""

import pytest
from bookbuild import COLAB, HTML, KAGGLE, expected_links, notebook_pages
from bs4 import BeautifulSoup
from notebooks import ROOT, config, toc_files


def launch_links(page):
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    hrefs = [a["href"] for a in soup.find_all("a", href=True)]
    return [h for h in hrefs if h.startswith(COLAB)], [h for h in hrefs if h.startswith(KAGGLE)]


def test_repository_url_is_a_github_repository():
    url = config()["repository"]["url"]
    assert url.startswith("https://github.com/") and len(url.rstrip("/").split("/")) == 5, (
        f"_config.yml repository.url must be https://github.com/OWNER/REPO (Colab and Kaggle need it), got {url}"
    )


def test_every_chapter_is_a_notebook_page():
    # Plain pages without code: the start page, the bibliography and the instructors' page.
    plain = ("chapters/index", "chapters/references", "chapters/instructors")
    chapters = [n for n in toc_files() if n.startswith("chapters/") and n not in plain]
    missing = [n for n in chapters if n not in notebook_pages()]
    assert chapters and not missing, f"chapters without a paired .ipynb (no Colab/Kaggle link possible): {missing}"


@pytest.mark.parametrize("name", notebook_pages())
def test_colab_and_kaggle_links_open_this_pages_notebook(built_book, name):
    page = HTML / f"{name}.html"
    assert page.is_file(), f"{page} was not built"
    colab, kaggle = launch_links(page)
    want_colab, want_kaggle = expected_links(name)
    assert colab == [want_colab], f"{name}: Colab link(s) {colab}, expected [{want_colab}]"
    assert kaggle == [want_kaggle], f"{name}: Kaggle link(s) {kaggle}, expected [{want_kaggle}]"
    # The links name a notebook that exists in the repository, paired with the page's source.
    path = want_kaggle.split("/blob/", 1)[1].split("/", 1)[1]
    assert (ROOT / path).is_file() and (ROOT / path).with_suffix(".md").is_file(), f"{path} does not exist"


def test_landing_page_has_no_launch_links(built_book):
    # chapters/index is plain Markdown: there is no notebook to open.
    colab, kaggle = launch_links(HTML / "chapters" / "index.html")
    assert colab == [] and kaggle == []
