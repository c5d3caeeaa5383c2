"""The French edition: built from the same notebooks, in French, and otherwise the English book.

- Both French editions (``bash .ci/build fr``, ``bash .ci/build student fr``) build with
  warnings as errors (a glued word or an alt text without its translation is a warning),
  every page of the table of contents, with ``lang="fr"``.
- Every page of each language links to the same page in the other, both ways, in both
  the instructor and the student editions.
- No English prose is left on a French page: each translated message's English text is
  absent from the page (Sphinx skips a translation it cannot parse, silently).
- A French page has the structure of its English page (headings, figures, images,
  code and output blocks, exercises, knowledge checks, tables), so the structure tests
  of the English chapters hold for the French ones; its figures pass the accessibility
  rules of ``test_accessibility.py``, with alt texts in French.
- The Colab and Kaggle links of a French page open the same notebook as the English page.
- The matplotlib figures of a French page are their French images (``locales/fr/plots``,
  ``utils/book/french_plots.py``); those of the English page are the notebooks' own.
- The French student edition holds no answer (in the English and the French number
  forms) and no solution text (phrases of the French solutions found nowhere else).
- The answer checker's messages in a French page's printed outputs are French, one for each
  English message of the English page, and chapter 12's tables give their verdicts in the
  words of its French prose (``utils/book/french_outputs.py``).
- Issue 58: no English word or English-style number in a printed results table, no English
  citation label or bibliography word, no hyphen-minus as a minus sign and no « X-Y » range
  in a French page's prose.

The offline browser checks (math typeset, nothing fetched from another host, images
load with alt text, no JavaScript error) run on the French edition in ``test_browser.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re

import pytest
import test_accessibility as accessibility
from bookbuild import FR_HTML, FR_STUDENT_HTML, HTML, STUDENT_HTML, expected_links, notebook_pages, sphinx_warnings
from bs4 import BeautifulSoup
from notebooks import ROOT, toc_files
from test_links import launch_links
from test_student_edition import IDS, answer_forms, found, text_files

_spec = importlib.util.spec_from_file_location("course_translations", ROOT / "utils" / "book" / "translations.py")
translations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(translations)
_spec = importlib.util.spec_from_file_location("course_book_ext", ROOT / "utils" / "book" / "course_book.py")
course_book = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course_book)

PAGES = list(toc_files())
STUDENT_PAGES = [n for n in PAGES if not n.startswith("solutions/") and n != "chapters/instructors"]
WORD_RUN = 4


def soup(root, name) -> BeautifulSoup:
    path = root / f"{name}.html"
    assert path.is_file(), f"{path} was not built"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def article_text(page: BeautifulSoup, prose_only: bool = False) -> str:
    """The text of a page's article; with ``prose_only``, without code, outputs and scripts
    (which stay in English in both editions)."""
    art = page.select_one("article") or page
    if prose_only:
        art = BeautifulSoup(str(art), "html.parser")
        for el in art.select("div.cell_input, div.cell_output, pre, script, style"):
            el.decompose()
    return re.sub(r"\s+", " ", art.get_text(" ")).strip()


@pytest.fixture(scope="module")
def french(french_book, french_student_book):
    for what, (rc, log) in (("French", french_book), ("French student", french_student_book)):
        warnings = sphinx_warnings(log)
        assert rc == 0 and not warnings, f"the {what} edition's build failed:\n" + "\n".join(
            warnings[:30] or log.splitlines()[-40:])


def test_both_french_editions_build_every_page_in_french(french):
    for root, names in ((FR_HTML, PAGES), (FR_STUDENT_HTML, STUDENT_PAGES)):
        for name in names:
            assert soup(root, name).html.get("lang") == "fr", f"{root}/{name}: not lang=fr"
    for name in PAGES:
        if name.startswith("solutions/") or name == "chapters/instructors":
            assert not (FR_STUDENT_HTML / f"{name}.html").exists(), f"the French student edition has {name}"


def _language_link(root, name):
    links = soup(root, name).select("p.course-language a.course-language-link")
    assert len(links) == 1, f"{root}/{name}: {len(links)} language links"
    return links[0]


@pytest.mark.parametrize("edition", ["instructor", "student"])
def test_every_page_links_to_the_same_page_in_the_other_language(built_book, student_book, french, edition):
    roots = {"en": HTML, "fr": FR_HTML} if edition == "instructor" else {"en": STUDENT_HTML, "fr": FR_STUDENT_HTML}
    for name in PAGES if edition == "instructor" else STUDENT_PAGES:
        for lang, other in (("en", "fr"), ("fr", "en")):
            link = _language_link(roots[lang], name)
            assert link["hreflang"] == other and link["lang"] == other
            target = ((roots[lang] / name).parent / link["href"]).resolve()
            assert target == (roots[other] / f"{name}.html").resolve(), f"{lang} {name}: links to {target}"
            assert target.is_file()


def _plain_runs(msgid: str) -> list[str]:
    """Runs of plain English words of a message as the page shows them (markup and spans removed)."""
    _, masked = translations.protected(msgid)
    masked = re.sub(r"[*_#>]|\\(?=[.#*_])", "", masked)
    runs = []
    for chunk in re.split(r"[\x00\n]|\]\(|[\[\]]", masked):
        words = chunk.split()
        if len(words) >= 8 and sum(w.isalpha() for w in words) >= 6:
            runs.append(" ".join(words))
    return runs


@pytest.mark.parametrize("name", PAGES)
def test_no_english_prose_is_left_on_a_french_page(french, name):
    text = article_text(soup(FR_HTML, name), prose_only=True)
    po = translations.LOCALES / "fr" / "LC_MESSAGES" / f"{name}.po"
    left = []
    for m in translations.entries(translations.read_catalog(po)):
        if m.string and m.string != m.id:
            left += [run for run in _plain_runs(m.id) if run in text]
    assert not left, f"{name}: English text left on the French page:\n  " + "\n  ".join(r[:90] for r in left[:10])


def _prose_without_code_and_math(page: BeautifulSoup) -> str:
    """The prose of a page's article, without code, outputs, scripts and formulas."""
    art = BeautifulSoup(str(page.select_one("article") or page), "html.parser")
    for el in art.select("div.cell_input, div.cell_output, pre, script, style, code, .math"):
        el.decompose()
    return re.sub(r"\s+", " ", art.get_text(" ")).strip()


@pytest.mark.parametrize("name", PAGES)
def test_formulas_on_a_french_page_take_the_decimal_comma(built_book, french, name):
    """Issue 37: a formula's decimal numbers read 0,3302 on a French page (the build writes
    ``0{,}3302`` by rule, ``translations.french_math``), its English-style thousands a thin space."""
    en = [re.sub(r"\s+", " ", m.get_text()) for m in soup(HTML, name).select("article .math")]
    fr = [re.sub(r"\s+", " ", m.get_text()) for m in soup(FR_HTML, name).select("article .math")]
    assert len(en) == len(fr), (name, len(en), len(fr))
    point = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])")
    left = [f for f in fr if point.search(f) or re.search(r"\d\{,\}\d{3}(?!\d)", f) and f in en]
    assert not left, f"{name}: formulas with a decimal point on the French page: {left[:5]}"
    assert sorted(translations.french_math(f) for f in en) == sorted(fr), (
        f"{name}: the formulas are not their English ones written by the rule")


@pytest.mark.parametrize("name", PAGES)
def test_numbers_in_french_prose_are_written_the_french_way(french, name):
    """No e-notation (« 3,2 × 10¹⁴ », never 3,3e18), × between sizes (« 4 000 × 128 »), and a unit
    after a number below 2 in the singular (« 0,66 seconde »), glued values included."""
    text = _prose_without_code_and_math(soup(FR_HTML, name))
    found = [m.group(0) for m in translations._E_NOTATION.finditer(text)]
    found += re.findall(r"\d[ \u00a0\u202f]?x[ \u00a0\u202f]?\d", text)
    found += translations.plural_below_two(text)
    assert not found, f"{name}: numbers written the English way on the French page: {found[:10]}"


def test_the_french_number_rules_hold_on_a_built_page():
    """The two checks above can fail: a page with each slip."""
    page = BeautifulSoup("<article><p>le 3,3e18 du tableau, 4 000 x 128 valeurs, 0,66 secondes</p>"
                         "<span class='math'>\\(0.3302\\)</span></article>", "html.parser")
    text = _prose_without_code_and_math(page)
    assert "0.3302" not in text and translations._E_NOTATION.search(text)
    assert re.search(r"\d x \d", text) and translations.plural_below_two(text)


STRUCTURE = {
    "headings": "h1, h2, h3, h4",
    "figures": "figure",
    "images": "article img",
    "code and outputs": "article pre",
    "exercises": "div.exercise",
    "solutions": "div.solution",
    "knowledge checks and dropdowns": "details",
    "admonitions": "div.admonition",
    "tables": "article table",
    "math": "article .math",
    "links": "article a.reference",
}


@pytest.mark.parametrize("name", PAGES)
def test_a_french_page_has_the_structure_of_its_english_page(built_book, french, name):
    en, fr = soup(HTML, name), soup(FR_HTML, name)
    differ = {what: (len(en.select(sel)), len(fr.select(sel))) for what, sel in STRUCTURE.items()
              if len(en.select(sel)) != len(fr.select(sel))}
    assert not differ, f"{name}: (English, French) counts differ: {differ}"
    assert en.find("h1").get_text() != fr.find("h1").get_text(), f"{name}: the title is not translated"


@pytest.mark.parametrize("name", PAGES)
def test_french_figures_pass_the_accessibility_rules_with_french_alt_text(built_book, french, name):
    fr = soup(FR_HTML, name)
    found_problems = accessibility.problems(fr, name) + accessibility.interactive_problems(fr, name)
    assert not found_problems, "\n".join(found_problems)
    en_alts = [i.get("alt") for i in soup(HTML, name).select("article img")]
    fr_alts = [i.get("alt") for i in fr.select("article img")]
    same = [a for a, b in zip(en_alts, fr_alts) if a == b]
    assert not same, f"{name}: alt text not translated: {[a[:60] for a in same]}"


def test_the_interface_and_the_table_of_contents_are_in_french(french):
    """The theme's strings that its French catalogue lacks, myst-nb's cell toggle, the author,
    the parts of the table of contents, and the interactive figures' captions."""
    english = [*course_book.FRENCH_INTERFACE, "Show code cell", "Hide code cell", "The course authors",
               ">The course<", ">A real task<", ">The paper&#39;s task<", ">The paper's task<", ">For instructors<"]
    left = []
    for root, names in ((FR_HTML, PAGES), (FR_STUDENT_HTML, STUDENT_PAGES)):
        for name in names:
            text = (root / f"{name}.html").read_text(encoding="utf-8")
            left += [f"{root.parent.parent.name}/{name}: {e}" for e in english if e in text]
    for root in (FR_HTML, FR_STUDENT_HTML):  # the toggle button's label, written by its script
        script = root / "_static" / "togglebutton.js"
        left += [str(script)] if script.is_file() and "Toggle hidden content" in script.read_text(encoding="utf-8") else []
    assert not left, "English interface left on French pages:\n  " + "\n  ".join(left[:20])
    for name in PAGES:
        en_caps = [c.get_text() for c in soup(HTML, name).select("figure.aiayn-fig figcaption")]
        fr_caps = [c.get_text() for c in soup(FR_HTML, name).select("figure.aiayn-fig figcaption")]
        assert len(en_caps) == len(fr_caps) and not set(en_caps) & set(fr_caps), (name, fr_caps)


@pytest.mark.parametrize("name", notebook_pages())
def test_colab_and_kaggle_links_of_a_french_page_open_the_same_notebook(french, name):
    colab, kaggle = launch_links(FR_HTML / f"{name}.html")
    want_colab, want_kaggle = expected_links(name)
    assert colab == [want_colab] and kaggle == [want_kaggle], (name, colab, kaggle)


def french_forms(form: str) -> set[str]:
    """A number as the French edition writes it in prose: 0.4011 -> 0,4011; 16,640 -> 16 640."""
    out = {form}
    french = translations.french_number(form)
    if french:
        out |= {french, french.replace(translations.NNBSP, translations.NBSP), french.replace(translations.NNBSP, " ")}
    return out


@pytest.fixture(scope="module")
def french_student_files(french):
    return text_files(FR_STUDENT_HTML)


def test_the_french_student_edition_holds_no_answer(french_student_files):
    leaks = []
    for id in IDS:
        for form in sorted({f for g in answer_forms(id, min_digits=4) for f in french_forms(g)}):
            where = [name for name, text in french_student_files.items() if found(form, text)]
            if where:
                leaks.append(f"Exercise {id}: {form} in {', '.join(where[:3])}")
    assert not leaks, f"{len(leaks)} answer(s) in the French student edition:\n  " + "\n  ".join(leaks)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace(translations.NBSP, " ").replace(translations.NNBSP, " ")).strip().lower()


def _runs(text: str) -> set[str]:
    """Runs of WORD_RUN words (letters, accents and apostrophes) of a text."""
    out = set()
    for chunk in re.split(r"[^\w' ’-]+|\d", text):
        words = chunk.split()
        out |= {" ".join(words[i:i + WORD_RUN]) for i in range(len(words) - WORD_RUN + 1)}
    return out


@pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="a student copy (bash .ci/student-repo) has no solutions")
def test_the_french_student_edition_contains_no_solution_text(french):
    solution_text, public = [], []
    for name in PAGES:
        page = soup(FR_HTML, name)
        art = page.select_one("article") or page
        blocks = art.select("div.solution")
        if name.startswith("solutions/"):
            solution_text.append(_norm(art.get_text(" ")))
            continue
        solution_text += [_norm(b.get_text(" ")) for b in blocks]
        for b in blocks:
            b.decompose()
        public.append(_norm(art.get_text(" ")))
    public_text = " ".join(public)
    marks = {r for t in solution_text for r in _runs(t) if r not in public_text}
    assert len(marks) > 200, f"only {len(marks)} distinctive phrases of the French solutions: has the HTML changed?"
    student = " ".join(_norm(BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser").get_text(" "))
                       for p in sorted(FR_STUDENT_HTML.rglob("*.html")) if "_static" not in p.parts)
    leaks = sorted(m for m in marks if m in student)
    assert not leaks, f"{len(leaks)} phrase(s) of the French solutions in the French student edition: {leaks[:20]}"


_PLOTS = ROOT / "locales" / "fr" / "plots"
_PLOT_PAGES = json.loads((_PLOTS / "manifest.json").read_text(encoding="utf-8")) if (_PLOTS / "manifest.json").is_file() else {}


def _shown_pngs(root, name) -> list[str]:
    """sha256 of each PNG image of a built page's article, in page order."""
    page = root / f"{name}.html"
    srcs = [img["src"] for img in soup(root, name).select("article img") if img.get("src", "").endswith(".png")]
    return [hashlib.sha256((page.parent / src).read_bytes()).hexdigest() for src in srcs]


@pytest.mark.parametrize("name", sorted(_PLOT_PAGES))
def test_the_static_figures_of_a_french_page_are_its_french_images(built_book, french, name):
    """Each matplotlib image of a French page is the French file of its English image
    (``utils/book/french_plots.py``), in both French editions; the English page keeps the English."""
    figures = _PLOT_PAGES[name]
    french_files = [hashlib.sha256((_PLOTS / e["french"]).read_bytes()).hexdigest() for e in figures]
    assert _shown_pngs(HTML, name) == [e["english"] for e in figures], f"{name}: the English page's images changed"
    roots = [FR_HTML] + ([FR_STUDENT_HTML] if name in STUDENT_PAGES else [])
    for root in roots:
        assert _shown_pngs(root, name) == french_files, f"{root}/{name}: not the French images of locales/fr/plots"


def _outputs(page: BeautifulSoup) -> list[str]:
    """The text of each printed output of a page's article."""
    return [pre.get_text() for pre in (page.select_one("article") or page).select("div.cell_output pre")]


def _english_checker_words() -> list[str]:
    """Runs of two words or more of the checker's English sentences (outside their fields), and its prefixes."""
    from utils.exercises import GENERIC_MESSAGES

    runs = {part.strip(" .,;:") for m in GENERIC_MESSAGES for part in re.split(r"\{\w+\}", m)}
    return sorted({r for r in runs if len(re.findall(r"[A-Za-z]{2,}", r)) >= 2} | {"Hint:", "Expected ", "not yet"})


@pytest.mark.parametrize("name", PAGES)
def test_the_checkers_messages_on_a_french_page_are_french(built_book, french, name):
    """Issue 37: the exercises' stored outputs ("Exercise 2.1: not answered yet. ...") were English."""
    english_words = _english_checker_words()
    for root in [FR_HTML] + ([FR_STUDENT_HTML] if name in STUDENT_PAGES else []):
        outputs = _outputs(soup(root, name))
        left = [o for o in outputs if re.search(r"^Exercise \d+\.\d+:", o, re.M)]
        assert not left, f"{root}/{name}: English messages of the checker:\n" + "\n".join(o[:200] for o in left[:3])
        messages = [o for o in outputs if re.search(r"^Exercice \d+\.\d+\u00a0:", o, re.M)]
        english = [w for o in messages for w in english_words if w in " ".join(o.split())]
        assert not english, f"{root}/{name}: English words in the checker's French messages: {english[:10]}"
        count = sum(len(re.findall(r"^Exercice \d+\.\d+\u00a0:", o, re.M)) for o in outputs)
        assert count == sum(len(re.findall(r"^Exercise \d+\.\d+:", o, re.M)) for o in _outputs(soup(HTML, name))), name


VERDICTS = {"within noise": "dans le bruit", "better": "meilleur", "worse": "moins bon"}


def _verdict_columns(page: BeautifulSoup) -> list[list[int]]:
    """Per results table of chapter 12's English page, the indices of its verdict columns ("Our
    Table 3" and each group's); the French page's tables are the same, with French headers."""
    out = []
    for table in page.select("article div.course-table table"):
        heads = [th.get_text().strip() for th in table.select("thead th")]
        out.append([i for i, h in enumerate(heads) if h == "verdict" or heads[:4] == ["row", "vs", "exact", "perplexity"]
                    and h in ("exact", "perplexity")])
    return out


def _verdict_cells(page: BeautifulSoup, columns: list[list[int]]) -> list[str]:
    """The cells of the verdict columns ``columns`` (``_verdict_columns``) of a page's results tables."""
    tables = page.select("article div.course-table table")
    assert len(tables) == len(columns), "the French page shows the English page's tables"
    cells = [tr.find_all("td")[i].get_text().strip() for table, cols in zip(tables, columns)
             for tr in table.select("tbody tr") for i in cols]
    return [c for c in cells if c]


def test_chapter_12s_tables_give_their_verdicts_in_french(built_book, french):
    name = "chapters/12_variations"
    columns = _verdict_columns(soup(HTML, name))
    english = _verdict_cells(soup(HTML, name), columns)
    assert len(english) > 50 and set(english) == set(VERDICTS), set(english)
    for root in (FR_HTML, FR_STUDENT_HTML):
        assert _verdict_cells(soup(root, name), columns) == [VERDICTS[v] for v in english], f"{root}/{name}"


# ---- issue 58: the last English words and English typography a French reader meets --------

_spec = importlib.util.spec_from_file_location("course_french_outputs", ROOT / "utils" / "book" / "french_outputs.py")
french_outputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(french_outputs)
#: A hyphen-minus used as a minus sign: before a digit, after no letter, digit or closing bracket.
_HYPHEN_MINUS = re.compile(r"(?<![\w.,)\]-])-\d")
#: A range written with a hyphen, « 0,79-1,51 » (a version such as 1.9-6 has a decimal point: not prose).
_HYPHEN_RANGE = re.compile(r"(?<![\w.,-])\d+(?:,\d+)?[%\u202f]*-\d+(?:,\d+)?(?![\w.-])")
_DOUBLED = re.compile(r"\b(?:de|à) de \d|\bd[’'] ?de \d")


def typography_slips(text: str) -> list[str]:
    """The English typography left in a French page's prose: a hyphen-minus as a minus sign, a
    hyphen range, a range with its « de » doubled."""
    return [m.group(0) for r in (_HYPHEN_MINUS, _HYPHEN_RANGE, _DOUBLED) for m in r.finditer(text)]


def english_table_cells(page: BeautifulSoup, phrases: dict[str, str]) -> list[str]:
    """The words of a French page's results tables that are not French (not a translation of
    ``outputs.po``), and their cells without words that keep an English number (0.5, -3)."""
    out = []
    french_words = set(phrases.values()) | {v.replace(" ", "\u00a0") for v in phrases.values()}
    kept = {phrases.get(k, k) for k in french_outputs.KEEP_COLUMNS}  # names written with digits: 3.2.1, 2-2
    for table in page.select("div.course-table table"):
        caption = table.find("caption")
        heads = [th.get_text().strip() for th in table.select("thead th")]
        keep = [i for i, h in enumerate(heads) if h in kept]
        cells = ([caption] if caption is not None else []) + table.select("th") + [
            td for tr in table.select("tbody tr") for i, td in enumerate(tr.find_all("td")) if i not in keep]
        for cell in cells:
            text = cell.get_text().strip()
            if not text:
                continue
            if french_outputs.has_words(text):
                if text not in french_words and text.replace("\u00a0", " ") not in french_words:
                    out.append(text)
            elif (re.search(r"(?<![\w.=])\d+\.\d+(?![\d.])|(?<![\w.=-])-\d", text)
                  and not french_outputs._CODE_NAME.fullmatch(text) and "=" not in text):
                out.append(text)
    return out


def test_the_scans_find_each_slip():
    """The scans below can fail: a French text and a table with each slip."""
    assert typography_slips("un écart de -0,3 point, de 0,79-1,51 points, de de 0,5 à 1") == [
        "-0", "0,79-1,51", "de de 0"]
    assert not typography_slips("SmolLM2-135M, version 1.9-6, x−1, de \u22120,3 à 2,5, IBM-1")
    table = BeautifulSoup('<div class="course-table"><table><thead><tr><th>test BLEU</th><th>run</th></tr></thead>'
                          '<tbody><tr><td>0.5</td><td>d_ff=1024</td></tr><tr><td>\u22120,5</td><td>lr2</td></tr>'
                          '</tbody></table></div>', "html.parser")
    assert english_table_cells(table, {"test BLEU": "BLEU de test", "lr2": "lr2"}) == ["test BLEU", "run", "0.5"]


@pytest.mark.parametrize("name", PAGES)
def test_a_french_page_shows_french_tables_citations_and_number_typography(french, name):
    """Issue 58: no English table header, word or number in a printed results table
    (``french_outputs``), no English citation label or bibliography word (« et », « s. d. »:
    ``french_citations``), no hyphen-minus as a minus sign and no « X-Y » range in the prose."""
    page = soup(FR_HTML, name)
    phrases = french_outputs.phrase_table(ROOT / "locales" / "fr" / "LC_MESSAGES" / "outputs.po").get(name, {})
    assert not english_table_cells(page, phrases), f"{name}: English in printed tables: {english_table_cells(page, phrases)[:8]}"
    slips = typography_slips(_prose_without_code_and_math(page))
    assert not slips, f"{name}: English number typography in the prose: {slips[:8]}"
    labels = [a.get_text() for a in page.select("a.reference.internal[title]")]  # a citation's label
    entries = [a.get("title", "") for a in page.select("a.reference.internal[title]")]  # its tooltip: its entry
    entries += [re.sub(r"^\s*\[[^\]]*\]\s*(?:\([^)]*\))?", "", c.get_text(" ")) for c in page.select('[role="doc-biblioentry"]')]
    english = [t for t in labels if re.search(r" and |\bn\.d\.", t)]
    english += [t for t in entries if re.search(r" and |\bn\.d\.|\bURL:", authors(t)) or re.search(r"\bn\.d\.|\bURL:", t)]
    assert not english, f"{name}: English citation words: {english[:5]}"


def authors(entry: str) -> str:
    """The names at the head of a bibliography entry: up to the first full stop after a word
    (not after an initial, « Geoffrey E. Hinton »). A title may say "and"; names may not."""
    m = re.search(r"(?<=\w\w)\.\s", entry)
    return entry[:m.start()] if m else entry


def test_authors_stop_at_the_first_full_stop_after_a_word():
    assert authors("Jimmy Ba, and Geoffrey E. Hinton. Layer normalization and more.") == "Jimmy Ba, and Geoffrey E. Hinton"
