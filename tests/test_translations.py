"""The French edition's catalogues are current, complete and faithful (``utils/book/translations.py``).

- **Current**: the templates extracted from the book as it is now (Sphinx's gettext
  builder over the executed notebooks, plus the glued words and the answer checkers'
  sentences) hold exactly the messages of ``locales/fr/LC_MESSAGES``. An English prose
  change therefore fails here until ``bash .ci/translations update`` is run and the new
  or fuzzy messages are translated.
- **Complete and faithful**: every message is translated, none is fuzzy, and each
  translation keeps the roles, math, code, link targets and numbers of its English and
  follows French typography (``translations.problems``; the rules are tested to fail).
- The answer checkers speak French when asked (``check(..., lang="fr")``, ``COURSE_LANG``).
- **One word for one thing**: every catalogue uses the terms settled in the tables of
  ``locales/fr/CONVENTIONS.md`` (the one source: « étape », « préchauffage », « sous-mot »,
  « jeu de test »...), avoids the calques listed there, the impersonal « on » and nested
  parentheses; each chapter glosses « plongement (embedding) », « jeton (token) »... at first
  use; quoted English keeps its English spacing (``translations.term_problems`` and the rest).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest
import torch
from bs4 import BeautifulSoup
from notebooks import ROOT

_spec = importlib.util.spec_from_file_location("course_translations", ROOT / "utils" / "book" / "translations.py")
translations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(translations)

CATALOGUES = translations.catalogs("fr")
NBSP, NNBSP = translations.NBSP, translations.NNBSP


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    """The templates of the book as it is now (a gettext build, about 20 s)."""
    return translations.extract(tmp_path_factory.mktemp("gettext"))


def test_the_catalogues_hold_every_message_of_the_book_as_it_is(templates):
    found = translations.stale(templates)
    assert not found, ("the French catalogues are behind the English (run `bash .ci/translations update`, "
                       "then translate what `bash .ci/translations status` lists):\n  " + "\n  ".join(found[:40]))
    assert len(CATALOGUES) > 20 and {"glue", "checkers"} <= {p.stem for p in CATALOGUES}


def test_a_changed_english_sentence_makes_the_catalogues_stale(templates, tmp_path):
    """The check above can fail: one sentence of chapter 2 changed, as an author would change it."""
    pots = tmp_path / "pots"
    shutil.copytree(templates, pots)
    pot = pots / "chapters" / "02_scaled_dot_product_attention.pot"
    text = pot.read_text(encoding="utf-8")
    assert 'msgid "Queries, keys and values"' in text
    pot.write_text(text.replace('msgid "Queries, keys and values"', 'msgid "Queries, keys, and values"'),
                   encoding="utf-8")
    found = translations.stale(pots)
    assert any("new English" in f and "Queries, keys, and values" in f for f in found), found
    assert any("no longer in the book" in f and "Queries, keys and values" in f for f in found), found


@pytest.mark.parametrize("po", CATALOGUES, ids=lambda p: str(p.relative_to(translations.LOCALES)))
def test_every_message_is_translated_and_keeps_what_it_must(po):
    found = translations.check_catalog(po)
    assert not found, f"{len(found)} problem(s):\n  " + "\n  ".join(found[:30])


def test_the_rules_catch_bad_translations():
    problems = translations.problems
    en = ("The model has {glue:text}`n_params` parameters, $d_{model} = 512$; see "
          "{doc}`the training chapter <10_training>` and `train_step` (section 5.3): 14,672 pairs, 0.841.")
    good = (f"Le modèle a {{glue:text}}`n_params` paramètres, $d_{{model}} = 512${NNBSP}; voir "
            f"{{doc}}`le chapitre sur l’entraînement <10_training>` et `train_step` (section 5.3){NBSP}: "
            f"14{NNBSP}672 paires, 0,841.")
    assert problems(en, good) == []
    bad = {
        "not translated": "",
        "lost or changed": good.replace("{glue:text}`n_params`", "1 397 376"),
        "numbers of the English missing": good.replace(f"14{NNBSP}672", "quinze mille"),
        "decimal point": good.replace("0,841", "0.841"),
        "quotes": good.replace("paires", '"paires"'),
        "before ':'": good.replace(f"{NBSP}:", ":"),
        "before ';'": good.replace(f"{NNBSP};", " ;"),
    }
    for what, text in bad.items():
        found = problems(en, text)
        assert any(what in f for f in found), (what, found)
    assert any("lost or changed" in f for f in problems(en, good.replace("<10_training>", "<11_results>")))
    assert any("fuzzy" in f for f in problems(en, good, fuzzy=True))
    assert any("identical" in f for f in problems(en, en))
    assert problems("Carnegie Mellon", "Carnegie Mellon") == []
    formula = "\nQ = K = V\n"
    assert problems(formula, formula) == [] and problems(formula, "\nQ = K\n")
    assert any("apostrophe" in f for f in problems("The model", "l'*entropie* du modèle"))
    assert any("numbered list" in f for f in problems("2. Scaled attention", "2. L'attention"))
    assert problems("2. Scaled attention", "2\\. L’attention") == []


def test_french_typography_and_numbers():
    ft = translations.french_typography
    assert ft('Le "masque" : voir ceci ; et cela? Oui! 26,2 % de 14 672') == (
        f"Le «{NBSP}masque{NBSP}»{NBSP}: voir ceci{NNBSP}; et cela{NNBSP}? Oui{NNBSP}! 26,2{NNBSP}% de 14{NNBSP}672")
    assert ft(ft("Durée: 5 s; fin")) == ft("Durée: 5 s; fin")  # idempotent
    assert ft("`a; b: c?` et $x: y$ et https://example.org/a:b") == "`a; b: c?` et $x: y$ et https://example.org/a:b"
    fn = translations.french_number
    assert fn("14,672") == f"14{NNBSP}672" and fn("0.841") == "0,841" and fn("26.2%") == f"26,2{NNBSP}%"
    assert fn("3.24e14") == f"3,24{NBSP}×{NBSP}10¹⁴" and fn("-5") == "\u22125" and fn("within noise") is None
    assert fn("3.2.1") is None
    assert translations.english_numbers("section 3.2.1 and 14,672 pairs, 0.5") == ["0.5", "14672", "3.2.1"]
    assert translations.english_number_options("about 40K sentences, SmolLM2-135M") == [{"135"}, {"40", "40000"}]
    assert translations.french_numbers(f"section 3.2.1 et 14{NNBSP}672 paires, 0,5") == ["0.5", "14672", "3.2.1"]
    assert translations.french_glued("[2.0093, 1.3302]") == f"[2,0093{NNBSP}; 1,3302]"
    assert translations.french_glued("0.46-0.49") == "0,46 à 0,49" and translations.french_glued("24.65%-25.1%") == \
        f"24,65{NNBSP}% à 25,1{NNBSP}%" and translations.french_glued("9-11") == "9 à 11"
    assert translations.french_glued("-0.54--0.2") == "\u22120,54 à \u22120,2" and translations.french_glued("1.9-6a") is None
    assert translations.french_glued("within noise") is None and translations.french_glued("[a, 1]") is None
    assert translations.french_glued("+1.53 [+0.58, +2.53]") == f"+1,53 [+0,58{NNBSP}; +2,53]"
    assert translations.french_glued("+1.53 [a, +2.53]") is None
    assert translations.french_glued("-0.5") == "\u22120,5" and translations.french_glued("a-1") is None
    assert ft("l'*entropie* d'un `a'b`") == "l\u2019*entropie* d\u2019un `a'b`"


def test_interactive_figures_are_translated_from_their_catalogue():
    html = ("<figure class='aiayn-fig' id='f' aria-describedby='f-desc'><fieldset><legend>Head</legend>"
            "<button data-head='0'>head 1</button><button data-word='1'>cat</button></fieldset>"
            "<label for='f-d'>dimension d: <output>2</output></label>"
            "<div role='img' aria-label='Heat map of the weights'></div>"
            "<figcaption>Why divide.</figcaption><p id='f-desc'>Default state: 0.5.</p>"
            "<script>var t = 'Head';</script></figure>")
    table = {"Head": "Tête", "head 1": "tête 1", "dimension d:": "dimension d :",
             "Heat map of the weights": "Carte de chaleur des poids", "Why divide.": "Pourquoi diviser.",
             "Default state: 0.5.": "État initial : 0,5."}
    out, missing = translations.translate_figures(html, table)
    assert missing == []
    for french in table.values():
        assert french in out
    assert ">cat</button>" in out and "var t = 'Head';" in out  # data and scripts untouched
    _, missing = translations.translate_figures(html, {})
    assert sorted(missing) == sorted(table)


def test_interactive_figures_scripts_get_their_words_from_the_catalogue():
    """The texts a figure's script writes travel in its data-strings table: the French build
    translates each template (its {places} kept) and marks the figure lang="fr"."""
    import json

    from utils.figures import schedule_figure

    html = str(schedule_figure())
    english = json.loads(re.search(r"data-strings='([^']*)'", html).group(1).replace("&quot;", '"'))
    assert english["x_axis"] == "step (log scale)" and "{peak}" in english["peak_label"]
    table = {text: f"FR[{text}]" for _, _, text in translations.figure_texts(BeautifulSoup(html, "html.parser"))}
    assert {"step (log scale)", "peak {peak}"} <= set(table), "the script's templates are catalogue messages"
    out, missing = translations.translate_figures(html, table, lang="fr")
    fig = BeautifulSoup(out, "html.parser").select_one("figure.aiayn-fig")
    french = json.loads(fig["data-strings"])
    assert missing == [] and fig["lang"] == "fr" and french["x_axis"] == "FR[step (log scale)]"
    assert set(french) == set(english), "the same keys"
    _, missing = translations.translate_figures(html, {})
    assert "step (log scale)" in missing
    # every kind of figure has its templates in the catalogue of each page that shows it, from the code
    kinds = {f.stem for f in (ROOT / "utils" / "figures" / "js").glob("*.js")} - {"common"}
    assert set(translations.figure_templates()) == kinds
    assert translations.figure_templates()["schedule"]["x_axis"] == "step (log scale)"
    # a translation must keep a template's places
    assert any("lost or changed" in p for p in translations.problems("peak {peak}", "pic"))
    assert translations.problems("peak {peak}", "pic {peak}") == []


def test_formulas_take_the_decimal_comma_by_rule():
    """Issue 37: in the French edition a formula's decimal numbers take the comma (``0{,}3302``),
    its thousands a thin space, and its items « ; » when a comma would be ambiguous."""
    fm = translations.french_math
    cases = {
        "1 / (1 + 2.0281) = 0.3302": "1 / (1 + 2{,}0281) = 0{,}3302",
        "[0.7071, 0, 0.7071]": "[0{,}7071\\,; 0\\,; 0{,}7071]",
        "lp = ((5 + 12)/6)^{0.3}": "lp = ((5 + 12)/6)^{0{,}3}",
        "2 \\cdot 64 \\cdot 256 + 256 + 64 = 33{,}088": "2 \\cdot 64 \\cdot 256 + 256 + 64 = 33\\,088",
        "1/\\sqrt{2{,}048{,}000} = 1/1431.1 \\approx 6.988 \\times 10^{-4}":
            "1/\\sqrt{2\\,048\\,000} = 1/1431{,}1 \\approx 6{,}988 \\times 10^{-4}",
        "\\min\\left(\\text{step}^{-0.5},\\ \\text{step}\\right)": "\\min\\left(\\text{step}^{-0{,}5}\\,;\\ \\text{step}\\right)",
        "x_{i,j} = 0.5": "x_{i,j} = 0{,}5",  # a comma inside braces is not a list's
        "H(q, p) = H(q) + (V - 1)\\, q_o": "H(q, p) = H(q) + (V - 1)\\, q_o",  # no decimal: untouched
        "Q = K = V": "Q = K = V", "\\text{section 3.2.1}": "\\text{section 3.2.1}",
    }
    for english, french in cases.items():
        assert fm(english) == french, (english, fm(english))


def test_scientific_values_sizes_and_singular_below_two():
    """« 3,2 × 10¹⁴ », never 3,3e18; « 4 000 × 128 »; « 0,66 seconde »: as glued values are written,
    and as the catalogue rules require of a translator."""
    fg, nb = translations.french_glued, NBSP
    assert fg("3.0e18") == f"3,0{nb}×{nb}10¹⁸" and fg("2.703e-06") == f"2,703{nb}×{nb}10⁻⁶"
    assert fg("3.2 × 10¹⁴") == f"3,2{nb}×{nb}10¹⁴" and fg("1e-9") == "10⁻⁹"
    assert fg("1.4e-06 < 1e-05") == f"1,4{nb}×{nb}10⁻⁶{nb}< 10⁻⁵" and fg("-0.54 to +0.23") == "\u22120,54 à +0,23"
    assert fg("0.55 to 1.86") == "0,55 à 1,86" and fg("two to three") is None
    # « de X à Y »: the build adds the « de » unless the sentence has it
    fr = translations.french_range
    assert fr("0,55 à 1,86", "intervalle (") == "de 0,55 à 1,86" and fr("0,55 à 1,86", "a baissé de ") == "0,55 à 1,86"
    assert fr("9 à 11", "les mots d’") == "9 à 11" and fr("0,55", "(") == "0,55" and fr(f"9{NNBSP}000 à 10{NNBSP}000", "") \
        == f"de 9{NNBSP}000 à 10{NNBSP}000" and fr("\u22120,3 à 2,5", "aux, ") == "de \u22120,3 à 2,5"
    assert translations.english_numbers("3.3e18 FLOPs, eps 1e-9") == translations.french_numbers(
        f"3,3{nb}×{nb}10¹⁸ FLOP, eps 10⁻⁹") == ["sci:1e-09", "sci:3.3e+18"]
    sb = translations.singular_below_two
    assert sb("0,66", " secondes de plus") == " seconde de plus" and sb("1,5", f"{nb}heures") == f"{nb}heure"
    assert sb("2", " secondes") == " secondes" and sb("0,5", " fois") == " fois" and sb("1", " FLOP") == " FLOP"
    en = "The paper's base model took 3.3e18 FLOPs; a table of 4,000 x 128; each step takes 0.66 seconds."
    good = (f"Le modèle de base de l’article a coûté 3,3{nb}×{nb}10¹⁸ FLOP{NNBSP}; une table de 4{NNBSP}000{nb}×{nb}128{NNBSP}; "
            "chaque étape prend 0,66 seconde.")
    assert translations.problems(en, good) == []
    bad = {"scientific notation": good.replace(f"3,3{nb}×{nb}10¹⁸", "3,3e18"),
           "with ×": good.replace(f"{nb}×{nb}128", " x 128"),
           "singular below 2": good.replace("0,66 seconde", "0,66 secondes")}
    for what, text in bad.items():
        assert any(what in p for p in translations.problems(en, text)), (what, translations.problems(en, text))
    assert translations.plural_below_two("sur V - 1 jetons, 1 000 étapes, 2 heures") == []
    assert translations.french_typography("une table de 4 000 × 128") == f"une table de 4{NNBSP}000{nb}×{nb}128"


def test_the_checkers_speak_french_when_asked(capsys, monkeypatch):
    from utils.exercises import check

    monkeypatch.delenv("COURSE_LANG", raising=False)
    wrong = torch.zeros(3)
    assert not check("2.1", wrong)
    english = capsys.readouterr().out
    assert not check("2.1", wrong, lang="fr")
    french = capsys.readouterr().out
    assert english.startswith("Exercise 2.1: not yet.") and french.startswith("Exercice 2.1")
    assert "Hint" in english and "Hint" not in french
    monkeypatch.setenv("COURSE_LANG", "fr")
    check("2.1", ...)
    unanswered = capsys.readouterr().out
    assert unanswered.startswith("Exercice 2.1") and "not answered" not in unanswered
    with pytest.raises(ValueError, match="lang must name one of the languages"):
        check("2.1", wrong, lang="de")
    # every line still fits the notebooks' 76 columns
    assert max(len(line) for line in (french + unanswered).splitlines()) <= 76
    assert os.environ["COURSE_LANG"] == "fr"


# ----------------------------------------------------------------------------- the edition's words (issue 37)

#: Known exceptions, for now: catalogues that still write the words the conventions replaced
#: (« morceau », « pas », « échauffement », « ensemble de test », « livré », « FLOPs »,
#: « I have no clue ! »...). Another hand edits them and applies the same changes; until then
#: the tests named here are expected to fail on them (strict xfail), so that an entry must be
#: removed from this table as soon as its catalogue passes.
AWAITING_THE_SETTLED_TERMS: dict[str, set[str]] = {}


def _catalogue_id(po) -> str:
    return po.relative_to(translations.LOCALES / "fr" / "LC_MESSAGES").as_posix()


def _awaiting(catalogues, test: str):
    return [pytest.param(po, marks=pytest.mark.xfail(strict=True, reason="listed in AWAITING_THE_SETTLED_TERMS"))
            if test in AWAITING_THE_SETTLED_TERMS.get(_catalogue_id(po), ()) else po for po in catalogues]


TERMS = translations.settled_terms()
CHAPTERS = [po for po in CATALOGUES if translations.chapter_headings(po) is not None]


def test_the_conventions_settle_each_term_of_issue_37():
    """The tables of locales/fr/CONVENTIONS.md, which the tests below read, hold every term
    the first reader found translated several ways."""
    never = {form for form, _, _ in TERMS["never"]}
    for form in ("échauffement", "point de sauvegarde", "morceau", "pièces", "thread", "ensemble de test",
                 "FLOPs", "pre-norm", "post-norm", "le softmax", "attention permise", "un GRU", "livré",
                 "table de plongement", "pas d’entraînement", "N pas", "minuscule", "périphérique",
                 "quel genre de chose", "une tâche monotone"):
        assert form in never, f"CONVENTIONS.md no longer forbids {form!r}"
    glossed = {written for _, _, written in TERMS["glosses"]}
    assert {"plongement (embedding)", "jeton (token)", "forçage par l’enseignant (teacher forcing)",
            "préchauffage (warmup)", "pré-normalisation (pre-norm)"} <= glossed, glossed
    assert any("We suspect" not in en and "for large values of $d_k$" in en for en, _ in TERMS["quotations"])
    assert len(CHAPTERS) == 18


@pytest.mark.parametrize("po", _awaiting(CATALOGUES, "terms"), ids=_catalogue_id)
def test_every_catalogue_uses_the_settled_terms(po):
    """No form the conventions forbid, no impersonal « on », no parenthesis in a parenthesis,
    one translation of each quotation of the paper."""
    found = [f"{m.id[:60]!r}: {p}" for m in translations.entries(translations.read_catalog(po))
             for p in translations.term_problems(m.id, m.string, TERMS)]
    assert not found, f"{len(found)} problem(s) (see locales/fr/CONVENTIONS.md):\n  " + "\n  ".join(found[:30])


@pytest.mark.parametrize("po", _awaiting(CHAPTERS, "glosses"), ids=_catalogue_id)
def test_each_chapter_glosses_the_settled_terms_at_their_first_use(po):
    msgs = [(m.id, m.string) for m in translations.entries(translations.read_catalog(po))]
    found = translations.gloss_problems(msgs, translations.chapter_headings(po), TERMS)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("po", _awaiting(CATALOGUES, "quotes"), ids=_catalogue_id)
def test_quoted_english_keeps_its_english_spacing(po):
    found = [f"{m.id[:60]!r}: {p}" for m in translations.entries(translations.read_catalog(po))
             for p in translations.english_quote_problems(m.id, m.string)]
    assert not found, "\n  ".join(found)


def test_the_term_rules_catch_each_kind_of_slip():
    def caught(msgstr, msgid="The model.", what=""):
        found = translations.term_problems(msgid, msgstr, TERMS)
        assert any(what in f for f in found), (msgstr, found)

    bad = {
        "Chaque morceau allemand": "morceau", "deux vocabulaires de 4 000 pièces": "pièces",
        f"le pas 1{NNBSP}600 de l’entraînement": "le pas", f"après 3{NNBSP}000 pas": "000 pas",
        "un pas d’entraînement": "pas d’entraînement", "au pas {glue:text}`x`": "au pas",
        "pendant l’échauffement": "échauffement", "les points de sauvegarde": "points de sauvegarde",
        "sur un seul thread": "thread", "sur l’ensemble de test": "ensemble de test", "2P FLOPs": "FLOPs",
        "le Transformer pre-norm": "pre-norm", "le softmax des scores": "le softmax",
        "True = attention permise": "attention permise", "un GRU dans chaque sens": "un GRU",
        "le modèle livré": "livré", "la table de plongement": "table de plongement",
        "elle devient minuscule": "minuscule", "sur le périphérique `meta`": "périphérique",
        "quel genre de chose ne va pas": "quel genre de chose", "Voyez la première coordonnée comme x": "Voyez",
        "et prend {glue:text}`w` du poids": "prend", "Une tâche monotone.": "tâche monotone",
        "Si l’on donne la cible": "impersonal", "On dirait des bandes": "impersonal",
        "Comment peut-on le voir ?": "impersonal", "(Adam avec préchauffage (warmup), dropout)": "parentheses inside",
        "le teacher forcing du chapitre 10": "teacher forcing",
    }
    for msgstr, what in bad.items():
        caught(msgstr, what=what)
    paper = ('Section 3.2.1: "We suspect that for large values of $d_k$, the dot products grow large in magnitude, '
             'pushing the softmax function into regions where it has extremely small gradients."')
    caught(f"La section 3.2.1{NBSP}: «{NBSP}pour de grandes valeurs de $d_k$, les produits scalaires prennent de "
           f"grandes valeurs{NBSP}»", msgid=paper, what="paper's sentence")
    good = [
        "Le modèle ne peut pas apprendre, n’est-ce pas ?", "les mots mis en minuscules",
        "à l’étape 1 600, après 3 000 étapes d’entraînement", "le préchauffage (warmup) et la post-normalisation",
        "le **forçage par l’enseignant** (teacher forcing)", "une GRU, la table de plongements, les FLOP",
        "les jetons fournis, le jeu de test, les points de contrôle, les sous-mots, un fil d’exécution",
        "`on` et `pas` dans le code, $on$", "(deux parenthèses) puis (une autre)",
    ]
    for msgstr in good:
        assert translations.term_problems("The model.", msgstr, TERMS) == [], msgstr
    assert translations.term_problems(paper, f"«{NBSP}Nous soupçonnons que, pour de grandes valeurs de $d_k$, les "
                                      "produits scalaires deviennent grands en valeur absolue, ce qui pousse la fonction "
                                      f"softmax dans des régions où ses gradients sont extrêmement petits{NBSP}»", TERMS) == []
    # an English title in italics and the English of a quotation are not French prose
    assert translations.term_problems("*On Layer Normalization* and \"turn it on\"",
                                      f"*On Layer Normalization* et «{NBSP}turn it on{NBSP}»", TERMS) == []


def test_the_gloss_rule_wants_the_first_use_of_a_term_glossed():
    msgs = [("Embeddings", "Les plongements"),  # a heading: not a first use
            ("Each token has an embedding.", "Chaque jeton (token) a un plongement (embedding)."),
            ("The embedding again.", "Le plongement, encore.")]
    assert translations.gloss_problems(msgs, {"Embeddings"}, TERMS) == []
    found = translations.gloss_problems(msgs[:1] + msgs[2:] + msgs[1:2], {"Embeddings"}, TERMS)
    assert len(found) == 1 and "plongement (embedding)" in found[0], found
    assert translations.gloss_problems([("x", "le **forçage par l’enseignant** (teacher forcing)")], set(), TERMS) == []


def test_quoted_english_keeps_english_spacing_through_import_and_check():
    en = 'A translation: "I have no clue!" for "I have no idea!"; see it.'
    typed = 'Une traduction : "I have no clue!" pour "I have no idea!" ; voyez.'
    french = translations.keep_english_quotes(en, translations.french_typography(typed))
    assert f"«{NBSP}I have no clue!{NBSP}»" in french and f"«{NBSP}I have no idea!{NBSP}»" in french
    assert translations.english_quote_problems(en, french) == [] and translations.problems(en, french) == []
    spaced = french.replace("clue!", f"clue{NNBSP}!")
    assert any("English spacing" in p for p in translations.english_quote_problems(en, spaced))
    # French words in « » are French: they still take the French spaces
    assert translations.keep_english_quotes(en, f"«{NBSP}Quoi{NNBSP}!{NBSP}»") == f"«{NBSP}Quoi{NNBSP}!{NBSP}»"
