"""The French edition's static figures (``utils/book/french_plots.py``): each matplotlib image
of the book has a French version, made from the notebook as it is committed, with every text
translated by ``locales/fr/LC_MESSAGES/plots.po``.

- **Current**: for every notebook of the book, the manifest ``locales/fr/plots/manifest.json``
  lists exactly the PNG images its committed outputs hold (by the sha256 of their bytes,
  which is the same on every machine), each with a French PNG file. Re-executing a chapter
  (``bash .ci/sync``) changes its images' bytes, and this fails until
  ``python -m utils.book.french_plots`` is run for it.
- **Translated**: every text with words that the French run met has a translation in
  ``plots.po``, and the one the French image shows is that translation (a translation changed
  since: the command again).
- The hook writes French where matplotlib sets a text: words from the catalogue, numbers
  with the decimal comma, tick labels too; layout then measures the French.

The French build showing these files is tested in ``test_french_edition.py``.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import struct

import pytest
from notebooks import ROOT, toc_files

_spec = importlib.util.spec_from_file_location("course_translations", ROOT / "utils" / "book" / "translations.py")
translations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(translations)


def _load_plots():
    import sys

    sys.modules.setdefault("translations", translations)  # french_plots imports it as a top-level module
    spec = importlib.util.spec_from_file_location("course_french_plots", ROOT / "utils" / "book" / "french_plots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


french_plots = _load_plots()
MANIFEST = french_plots.read_manifest()
NOTEBOOKS = [n for n in toc_files() if (ROOT / f"{n}.ipynb").is_file()]


def _command(page: str) -> str:
    return f"`{french_plots.COMMAND} {page}.ipynb`"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG, from its header."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("page", NOTEBOOKS)
def test_every_static_figure_has_a_french_image_made_from_the_committed_notebook(page):
    nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    english = [sha for _, _, sha in french_plots.notebook_images(nb)]
    listed = [e["english"] for e in MANIFEST.get(page, [])]
    assert listed == english, (
        f"{page}: the French images were made from other English images than the committed notebook's "
        f"({len(listed)} listed, {len(english)} in the notebook, {len(set(english) - set(listed))} new): "
        f"after re-executing a chapter, run {_command(page)}")
    pngs = {french_plots.png_sha(o["data"]["image/png"]): base64.b64decode("".join(o["data"]["image/png"]))
            for c in nb["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})}
    for entry in MANIFEST.get(page, []):
        path = french_plots.PLOTS / entry["french"]
        assert path.is_file(), f"{page}: {path} is missing: run {_command(page)}"
        en_w, en_h = png_size(pngs[entry["english"]])
        fr_w, fr_h = png_size(path.read_bytes())
        # The same figure: French words are longer, so the tight box may grow a little.
        assert abs(fr_w - en_w) <= 0.2 * en_w and abs(fr_h - en_h) <= 0.2 * en_h, (
            f"{page}, cell {entry['cell']}: the French image is {fr_w}×{fr_h}, the English {en_w}×{en_h}")


def test_no_page_outside_the_book_and_no_stray_file():
    assert set(MANIFEST) <= set(NOTEBOOKS), f"pages not in the book: {sorted(set(MANIFEST) - set(NOTEBOOKS))}"
    listed = {e["french"] for figures in MANIFEST.values() for e in figures}
    files = {p.relative_to(french_plots.PLOTS).as_posix() for p in french_plots.PLOTS.rglob("*.png")}
    assert files == listed, f"French images not in the manifest: {sorted(files - listed)[:5]}"
    assert MANIFEST, "no French image at all"


def test_the_french_images_are_small():
    """Each is written with PNG optimisation (``pil_kwargs``); together they weigh about what
    the English ones do."""
    french = sum(p.stat().st_size for p in french_plots.PLOTS.rglob("*.png"))
    english = 0
    for page in MANIFEST:
        nb = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
        english += sum(len(base64.b64decode("".join(o["data"]["image/png"])))
                       for c in nb["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    assert french <= 1.1 * english, f"the French images weigh {french:,} bytes, the English {english:,}"


@pytest.mark.parametrize("page", sorted(MANIFEST))
def test_every_text_of_a_french_image_is_the_catalogues_translation(page):
    table = french_plots.catalogue_table().get(page, {})
    for entry in MANIFEST[page]:
        for english, shown in entry["texts"].items():
            assert english in table, (f"{page}: {english!r} has no French in plots.po: run `bash .ci/translations "
                                      f"update`, translate it, then {_command(page)}")
            assert shown == table[english], (
                f"{page}, cell {entry['cell']}: the image shows {shown!r} for {english!r}, plots.po now says "
                f"{table[english]!r}: run {_command(page)}")


def test_the_plots_catalogue_is_the_manifests_texts():
    """``plots.pot`` (``bash .ci/translations update``) holds the texts the French runs met."""
    messages = translations.plot_messages()
    assert messages == [(p, t) for p, figures in MANIFEST.items() for t in dict.fromkeys(
        t for e in figures for t in e["texts"])]
    po = {(m.context, m.id) for m in translations.entries(translations.read_catalog(french_plots.CATALOGUE))}
    assert set(messages) == po, "plots.po is behind the manifest: run `bash .ci/translations update`"


@pytest.mark.parametrize("text, french", [
    ("0.5", "0,5"), ("\u22121.25", "\u22121,25"), ("4,000", "4\u202f000"), ("1e\u22123", "10⁻³"),
    ("$0.5$", "$0{,}5$"), ("$\\mathdefault{10^{2}}$", "$\\mathdefault{10^{2}}$"), ("(1, 6, 64)", "(1, 6, 64)"),
    ("<s>", "<s>"), ("26.2%", "26,2\u202f%"), ("1000", "1\u202f000"), ("\u221212000.5", "\u221212\u202f000,5"),
    ("512", "512"), ("p_drop=0.1", "p_drop=0.1"), ("h=1, scale=False", "h=1, scale=False"),
])
def test_a_text_without_words_is_written_the_french_way_by_rule(text, french):
    assert not french_plots.has_words(text)
    assert french_plots.french_text(text, {}) == french


def test_a_text_with_words_comes_from_the_catalogue_or_stays():
    assert french_plots.has_words("training step") and french_plots.has_words("$d_k$ = 64, step")
    assert french_plots.french_text("training step", {"training step": "étape"}) == "étape"
    assert french_plots.french_text("training step", {}) is None


def test_the_hook_writes_french_in_titles_labels_legends_and_ticks(tmp_path):
    """``install`` in this process, on a figure drawn as a notebook draws one, then undone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.text import Text

    saved = Text.set_text, FigureCanvasBase.print_figure
    record = tmp_path / "record.json"
    try:
        french_plots.install({"training step": "étape d’entraînement", "loss": "perte", "run": "entraînement",
                              "Loss by step": "Perte par étape"}, str(record))
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1000, 2000], [0.5, 0.25, 0.125], label="run")
        ax.set_xlabel("training step")
        ax.set_ylabel("loss")
        ax.set_title("Loss by step")
        ax.legend()
        ax.annotate("not in the table", (1000, 0.25))
        fig.tight_layout()
        fig.canvas.print_figure(tmp_path / "fig.png", format="png", bbox_inches="tight")
        texts = {t.get_text() for t in fig.findobj(Text) if t.get_text()}
        plt.close(fig)
    finally:
        Text.set_text, FigureCanvasBase.print_figure = saved
    assert {"étape d’entraînement", "perte", "entraînement", "Perte par étape", "not in the table"} <= texts
    assert "0,2" in texts, sorted(texts)
    assert not {"0.2", "training step"} & texts
    assert json.loads(record.read_text(encoding="utf-8")) == [{
        "training step": "étape d’entraînement", "loss": "perte", "Loss by step": "Perte par étape", "run": "entraînement",
        "not in the table": None}]
    assert (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"
