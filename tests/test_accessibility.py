"""Every image of the built book can be read without seeing it.

Rules (checked on the instructor edition, which has every page):

1. Every ``<img>`` has alt text that is not empty and not a file name or path.
2. Every image in a page's content is a captioned figure, with alt text of at least
   four words that says what it shows.
3. A plot carries numbers, so its numbers must also be given as text near it. A figure
   made by a code cell passes if its alt text and caption hold at least three numbers,
   or the printed output or prose within two blocks before or after it does (a printed
   matrix or table, or a sentence with the values). A figure without data (a diagram)
   passes with a long description instead: a caption of at least 25 words.
4. An interactive figure (``<figure class="aiayn-fig">``, see ``utils/figures``) is a
   ``role="figure"`` named by its caption and described by a text of its default state
   that holds at least three numbers; its picture has alt text (``role="img"`` with an
   ``aria-label`` of at least four words); every control has a label.
"""

from __future__ import annotations

import re

import pytest
from bookbuild import HTML
from bs4 import BeautifulSoup
from notebooks import toc_files

FILE_NAME = re.compile(r"^[\w./\\:-]*\.(png|jpe?g|gif|svg|webp|pdf)$", re.I)
NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?%?(?![\w])")
NEARBY_BLOCKS = 2
MIN_NUMBERS = 3
LONG_CAPTION_WORDS = 25
MIN_ALT_WORDS = 4


def pages():
    return list(toc_files())


def soup_of(name):
    path = HTML / f"{name}.html"
    assert path.is_file(), f"{path} was not built"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def numbers(text: str) -> list[str]:
    return NUMBER.findall(text or "")


def caption_text(figure) -> str:
    cap = figure.find("figcaption")
    if cap is None:
        return ""
    cap = BeautifulSoup(str(cap), "html.parser")
    for junk in cap.select(".caption-number, a.headerlink"):
        junk.decompose()
    return cap.get_text(" ", strip=True)


def blocks(article):
    """Top-level reading blocks of a page in document order: prose and cell outputs, not code."""
    out = []

    def walk(node):
        for child in getattr(node, "children", []):
            if getattr(child, "name", None) is None:
                continue
            classes = child.get("class", [])
            if "cell_input" in classes or child.name in ("figure", "script", "style"):
                continue
            if "cell_output" in classes or child.name in ("p", "table", "li", "pre", "dl") or "math" in classes:
                out.append(child)
            else:
                walk(child)

    walk(article)
    return out


def text_without_figures(block) -> str:
    block = BeautifulSoup(str(block), "html.parser")
    for fig in block.find_all("figure"):
        fig.decompose()
    return block.get_text(" ", strip=True)


def alt_problem(img, where):
    alt = (img.get("alt") or "").strip()
    src = img.get("src", "")
    if not alt:
        return f"{where}: <img src={src}> has no alt text"
    if FILE_NAME.match(alt) or alt == src.rsplit("/", 1)[-1]:
        return (f"{where}: <img src={src}> has a file name as alt text ({alt!r}): give the figure cell "
                "mystnb image alt metadata that says what it shows")
    return None


def problems(soup, name) -> list[str]:
    """Every broken rule on one page, as sentences (empty: the page passes)."""
    found = [p for img in soup.find_all("img") if (p := alt_problem(img, name))]
    article = soup.select_one("article") or soup
    order = blocks(article)
    for img in article.find_all("img"):
        alt, src = (img.get("alt") or "").strip(), img.get("src", "")
        if alt and len(alt.split()) < MIN_ALT_WORDS:
            found.append(f"{name}: alt text {alt!r} of {src} is too short to say what the figure shows")
        figure = img.find_parent("figure")
        if figure is None or not caption_text(figure):
            found.append(f"{name}: image {src} ({alt[:60]}) has no figure caption: "
                         "add mystnb figure caption metadata")
            continue
        output = img.find_parent("div", class_="cell_output")
        if output is None:
            continue  # an image in prose, not a plot
        caption = caption_text(figure)
        if len(numbers(alt + " " + caption)) >= MIN_NUMBERS or len(caption.split()) >= LONG_CAPTION_WORDS:
            continue
        i = next(k for k, b in enumerate(order) if b is output)
        near = order[max(0, i - NEARBY_BLOCKS): i + NEARBY_BLOCKS + 1]
        if len([n for b in near for n in numbers(text_without_figures(b))]) < MIN_NUMBERS:
            found.append(
                f"{name}: figure {figure.get('id') or src} ({alt[:60]}) shows data but its numbers are not "
                f"given as text: print them (a matrix, a table) in the figure's cell or next to it, write "
                f"them in a sentence or the caption, or describe a diagram in a caption of "
                f"{LONG_CAPTION_WORDS}+ words")
    return found


def interactive_problems(soup, name) -> list[str]:
    """Every broken rule 4 on one page (interactive figures), as sentences."""
    found = []
    for fig in soup.select("figure.aiayn-fig"):
        where = f"{name}: interactive figure #{fig.get('id')}"
        cap = fig.find("figcaption")
        if cap is None or len(cap.get_text(" ", strip=True).split()) < MIN_ALT_WORDS:
            found.append(f"{where} has no caption")
        elif fig.get("role") != "figure" or fig.get("aria-labelledby") != cap.get("id"):
            found.append(f"{where} is not a role=figure named by its caption (aria-labelledby)")
        desc = soup.find(id=fig.get("aria-describedby") or "-")
        if desc is None or len(numbers(desc.get_text(" "))) < MIN_NUMBERS:
            found.append(f"{where} has no text description of its default state with {MIN_NUMBERS}+ numbers "
                         "(aria-describedby)")
        alts = [e.get("aria-label", "") for e in fig.select("[role=img]")]
        if not alts or any(len(a.split()) < MIN_ALT_WORDS for a in alts):
            found.append(f"{where} has no alt text: give its picture role=img and an aria-label that says what it shows")
        for ctl in fig.select("input, select, button"):
            labelled = (ctl.find_parent("label") or (ctl.get("id") and fig.select_one(f'label[for="{ctl["id"]}"]'))
                        or ctl.get("aria-label") or (ctl.name == "button" and ctl.get_text(strip=True)))
            if not labelled:
                found.append(f"{where}: control {str(ctl)[:60]} has no label")
    return found


@pytest.mark.parametrize("name", pages())
def test_interactive_figures_have_captions_descriptions_alt_text_and_labels(built_book, name):
    found = interactive_problems(soup_of(name), name)
    assert not found, "\n".join(found)


def test_the_interactive_rules_catch_bad_figures():
    good = ("<figure class='aiayn-fig' id='f' role='figure' aria-labelledby='f-cap' aria-describedby='f-desc'>"
            "<label for='f-x'>angle</label><input id='f-x' type='range'><button>next step</button>"
            "<div role='img' aria-label='Heat map of the weights'></div><figcaption id='f-cap'>A live weight "
            "matrix of three tokens.</figcaption><p id='f-desc'>Default: 0.40, 0.20, 0.40.</p></figure>")
    assert interactive_problems(_page(good), "ok") == []
    bad = {"no caption": good.replace("A live weight matrix of three tokens.", ""),
           "no text description": good.replace("0.40, 0.20, 0.40", "see above"),
           "no alt text": good.replace(" aria-label='Heat map of the weights'", ""),
           "has no label": good.replace("<label for='f-x'>angle</label>", ""),
           "not a role=figure": good.replace("role='figure' ", "")}
    for what, html in bad.items():
        found = interactive_problems(_page(html), "x")
        assert len(found) == 1 and what in found[0], (what, found)


@pytest.mark.parametrize("name", pages())
def test_images_have_alt_text_captions_and_numbers_in_text(built_book, name):
    found = problems(soup_of(name), name)
    assert not found, "\n".join(found)


def _page(body):
    return BeautifulSoup(f"<html><body><img src='logo.png' alt='Colab logo'><article>{body}</article>"
                         "</body></html>", "html.parser")


def _cell(figure, printed=""):
    out = f"<div class='output stream highlight-myst-ansi'><pre>{printed}</pre></div>" if printed else ""
    return (f"<div class='cell'><div class='cell_input'><pre>plot(0.1, 0.2, 0.3)</pre></div>"
            f"<div class='cell_output'>{figure}{out}</div></div>")


FIG = ("<figure id='fig-x'><img src='../_images/ab12.png' alt='{alt}'><figcaption><p>"
       "<span class='caption-number'>Fig. 1 </span><span class='caption-text'>{cap}</span></p></figcaption></figure>")


def test_the_rules_catch_bad_figures():
    heat = "Heat map of the attention weights of three tokens"
    ok_numbers = _page(_cell(FIG.format(alt=heat, cap="Weights: rows sum to 1.")) + "<p>Row 1 is 0.40, 0.20, 0.40.</p>")
    ok_printed = _page(_cell(FIG.format(alt=heat, cap="Weights."), printed="[[0.40 0.20 0.40]]"))
    ok_diagram = _page(_cell(FIG.format(alt="Diagram of a post-norm and a pre-norm layer side by side",
                                        cap=" ".join(["word"] * LONG_CAPTION_WORDS))))
    for soup in (ok_numbers, ok_printed, ok_diagram):
        assert problems(soup, "ok") == []
    assert "has no alt text" in problems(_page(_cell("<img src='a.png'>")), "x")[0]
    assert "file name as alt" in problems(_page(_cell(FIG.format(alt="ab12.png", cap="c"))), "x")[0]
    assert "too short" in problems(_page(_cell(FIG.format(alt="plot", cap="A plot of 1, 2, 3."))), "x")[0]
    assert "no figure caption" in problems(_page(_cell(f"<img src='a.png' alt='{heat}'>")), "x")[0]
    missing = problems(_page(_cell(FIG.format(alt=heat, cap="Weights.")) + "<p>See the code: 1 figure.</p>"), "x")
    assert len(missing) == 1 and "numbers are not given as text" in missing[0]


@pytest.mark.parametrize("name", pages())
def test_captions_hold_no_stray_html_tags(built_book, name):
    """A token such as <s> or <pad> typed raw in a caption becomes an HTML element (<s> is
    strikethrough) and hides or strikes the rest of the caption: write it as code, `<s>`."""
    stray = [f"<{el.name}> in the caption of {fig.get('id') or 'a figure'}: {fig.figcaption.get_text(' ', strip=True)[:80]!r}"
             for fig in soup_of(name).select("figure") if fig.figcaption
             for el in fig.figcaption.find_all(["s", "pad", "strike", "del"])]
    assert not stray, "\n".join(stray)
