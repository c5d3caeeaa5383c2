"""Sphinx extension: ship MathJax 3 with the book, so formulas render with no network.

Sphinx's default ``mathjax_path`` is a CDN: a reader offline, or one who opens the
book from disk (``file://``), would see raw TeX. This extension copies MathJax 3.2.2
into the built book under ``_static/mathjax/`` and ``_config.yml`` points
``mathjax_path`` at it (``mathjax/tex-mml-svg.js``, a path under ``_static``).

* **Source**: the PyPI package ``sphinx-mathjax-offline`` (requirements.txt), which
  holds MathJax 3.2.2's browser files (what the npm package's ``es5/`` folder holds)
  in its ``static/mathjax`` folder. It is used as data only, not as a Sphinx
  extension: as one it would force the CHTML output and copy all 24 MB.
* **What is copied**: the one entry script that ``mathjax_path`` names and every
  folder of the bundle (TeX extensions that ``autoload`` fetches, the menu, the
  accessibility extensions and their speech rules, both outputs): whatever that
  script can load on demand. The 16 other entry scripts (other input/output
  combinations, the Node.js build) are never loaded by the page and are left out.
* **Why SVG output**: it draws glyphs as SVG paths, so it fetches no web fonts.
  MathJax's CHTML output fetches ``.woff`` fonts, which a browser may refuse from
  ``file://`` (each file is its own origin there).
* **Licence**: MathJax is under the Apache License 2.0; a ``NOTICE.txt`` beside the
  copy says what it is, where it came from and under which licence.
* **Why not ``_static`` in the book's folder**: Jupyter Book 1 adds every ``*.js``
  under the source's ``_static/`` to every page as a script; this copy goes straight
  into the output and is loaded only through ``mathjax_path``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pathlib
import re
import shutil

from sphinx.errors import ConfigError, ExtensionError

PACKAGE = "sphinx-mathjax-offline"  # PyPI name and import name (sic, with hyphens)
PREFIX = "mathjax/"  # mathjax_path must name a script in the shipped copy: "mathjax/<entry>.js"
NOTICE = """MathJax {version} (https://www.mathjax.org), copyright The MathJax Consortium,
licensed under the Apache License, Version 2.0: https://www.apache.org/licenses/LICENSE-2.0
Copied unchanged (the entry script {entry} and the folders it loads from) from the PyPI
package {package} {package_version} by utils/book/offline_math.py, so formulas render offline.
"""


def mathjax_source() -> pathlib.Path:
    """The folder of MathJax 3's browser files inside the installed ``sphinx-mathjax-offline``."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError(f"MathJax for the offline book comes from the PyPI package {PACKAGE}, "
                             "which is not installed: run `bash .ci/build` (it installs requirements.txt) "
                             "or `.venv/bin/pip install -r requirements.txt`")
    src = pathlib.Path(spec.submodule_search_locations[0]) / "static" / "mathjax"
    if not (src / "startup.js").is_file():
        raise ExtensionError(f"{PACKAGE} is installed but has no MathJax in {src}: "
                             "requirements.txt may pin a version with another layout")
    return src


def mathjax_version(src: pathlib.Path) -> str:
    """MathJax's version as its startup component states it (``VERSION="3.2.2"``)."""
    m = re.search(r'VERSION="([\d.]+)"', (src / "startup.js").read_text(encoding="utf-8"))
    return m.group(1) if m else "unknown"


def entry_script(config) -> str:
    """The entry script named by ``mathjax_path`` (e.g. ``tex-mml-svg.js``); a clear error otherwise."""
    path = config.mathjax_path or ""
    name = path.removeprefix(PREFIX)
    if not path.startswith(PREFIX) or "/" in name or not name.endswith(".js"):
        raise ConfigError(f"mathjax_path is {path!r}; the book ships MathJax itself, so it must be "
                          f"'{PREFIX}<entry script>.js' (for example '{PREFIX}tex-mml-svg.js'), "
                          "not a URL, or formulas show as raw TeX without a network")
    return name


def check_config(app, config):
    """Fail at start-up, before reading any page, if MathJax or the entry script is missing."""
    name = entry_script(config)
    src = mathjax_source()
    # The page's MathJax configuration (Sphinx's mathjax3_config, set by MyST) is for version 3.
    if not mathjax_version(src).startswith("3."):
        raise ConfigError(f"{PACKAGE} holds MathJax {mathjax_version(src)}; the book is set up for MathJax 3")
    if not (src / name).is_file():
        raise ConfigError(f"mathjax_path names {name!r}, which MathJax 3 in {PACKAGE} does not have")


def ship_mathjax(app):
    """Copy the entry script and MathJax's folders into the output's ``_static/mathjax/``.

    Runs when the builder starts, before pages are written, so Sphinx can add its
    cache-busting checksum to the script's address."""
    if app.builder.format != "html":
        return
    src = mathjax_source()
    dest = pathlib.Path(app.outdir) / "_static" / PREFIX.rstrip("/")
    dest.mkdir(parents=True, exist_ok=True)
    entry = entry_script(app.config)
    shutil.copy2(src / entry, dest)
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        shutil.copytree(folder, dest / folder.name, dirs_exist_ok=True)
    (dest / "NOTICE.txt").write_text(NOTICE.format(
        version=mathjax_version(src), entry=entry, package=PACKAGE,
        package_version=importlib.metadata.version(PACKAGE)), encoding="utf-8")


def setup(app):
    app.connect("config-inited", check_config)
    app.connect("builder-inited", ship_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
