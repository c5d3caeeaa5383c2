"""A chapter run in a real JupyterLab shows what the book shows.

``bash .ci/lab`` starts JupyterLab (here headless, on a loopback port, without a token, with its
own settings and workspaces folders and autosave off, so nothing of the checkout is rewritten).
Chromium, driven by Playwright, opens a chapter, checks that no kernel-selection dialog asks
anything (the notebooks' kernel is the course's Python), runs every cell with JupyterLab's own
"run all" command, waits for it to finish, and reads every output from the page. Each printed
output (stdout and plain-text results) must equal the committed one after the substitutions nbval
makes (``tests/nbval_sanitize.cfg``), except in the cells nbval does not compare either
(``nbval-ignore-output``). The interactive figures must run inside JupyterLab: no console
error, and their controls respond (the state a figure keeps changes as a control is moved).

Chapters: 02 (the first with code and two interactive figures) and 07 (a third figure).
Needs Chromium and Playwright, as tests/test_browser.py; about 40 s.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

import nbformat
import pytest
import test_browser
from notebooks import ROOT

CHAPTERS = {"chapters/02_scaled_dot_product_attention.ipynb": ("fig-sqrt-dk", "angle", 30),
            "chapters/07_positional_encoding.ipynb": ("fig-pe-rotation", "k", 7)}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STDOUT, PLAIN = "application/vnd.jupyter.stdout", "text/plain"
#: Settings of this test's JupyterLab: autosave off (the checkout's .ipynb and its paired .md stay
#: as committed) and every cell rendered, on screen or not (JupyterLab 4 may skip off-screen cells).
SETTINGS = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
            "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"}}


def sanitize(text: str) -> str:
    """``text`` after nbval's substitutions (tests/nbval_sanitize.cfg, in order), ANSI colours removed."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "tests" / "nbval_sanitize.cfg")
    text = ANSI.sub("", text)
    for section in cfg.sections():
        text = re.sub(cfg[section]["regex"], cfg[section]["replace"], text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def committed_outputs(cell) -> list[tuple[str, str]]:
    """(kind, text) of each output of a committed code cell that JupyterLab shows as text: its
    stdout (joined, as JupyterLab joins a cell's stream output) and each plain-text-only result."""
    out, stdout = [], ""
    for o in cell.outputs:
        if o.output_type == "stream" and o.name == "stdout":
            stdout += o.text
        elif o.output_type in ("execute_result", "display_data") and set(o.data) == {PLAIN}:
            out.append((PLAIN, o.data[PLAIN]))
    return ([(STDOUT, stdout)] if stdout else []) + out


READ_OUTPUTS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(cell => ({
  code: cell.classList.contains('jp-CodeCell'),
  outputs: [...cell.querySelectorAll('.jp-OutputArea-output')].map(o => ({
     mime: o.getAttribute('data-mime-type'), text: o.textContent}))}))"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab started by ``bash .ci/lab`` on a free loopback port: its base URL."""
    home = tmp_path_factory.mktemp("jupyterlab")
    for name, value in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    (home / "workspaces").mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.token=",
            "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={ROOT}",
            f"--LabApp.user_settings_dir={home / 'settings'}", f"--LabApp.workspaces_dir={home / 'workspaces'}",
            "--LabApp.expose_app_in_browser=True", "--ServerApp.open_browser=False"]
    with open(home / "server.log", "w") as log:
        server = subprocess.Popen(["bash", str(ROOT / ".ci" / "lab"), *args], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                  env=dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
                                           JUPYTER_RUNTIME_DIR=str(home / "runtime")),
                                  start_new_session=True)
        base = f"http://127.0.0.1:{port}/"
        for _ in range(240):
            try:
                urllib.request.urlopen(base + "api/status", timeout=1)
                break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.5)
        else:
            server.kill()
            pytest.fail("JupyterLab did not start in 2 minutes:\n" + (home / "server.log").read_text()[-3000:])
        assert server.poll() is None, "JupyterLab stopped:\n" + (home / "server.log").read_text()[-3000:]
        yield base
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


browser = test_browser.browser  # one Chromium per module, launched as tests/test_browser.py launches it


@pytest.mark.parametrize("notebook", CHAPTERS)
def test_a_chapter_run_in_jupyterlab_prints_what_the_book_prints(lab, browser, notebook):
    committed = nbformat.read(ROOT / notebook, as_version=4)
    files = [ROOT / notebook, (ROOT / notebook).with_suffix(".md")]
    before = [f.read_bytes() for f in files]
    errors = []
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught {e}"))
    page.goto(f"{lab}lab/tree/{notebook}?reset", wait_until="load", timeout=120000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
                           timeout=120000)
    assert page.locator(".jp-Dialog").count() == 0, "a dialog opened: " + page.locator(".jp-Dialog").inner_text()
    kernel = page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.name")
    assert kernel == committed.metadata.kernelspec.name, kernel
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")
    ran = page.evaluate("""() => Promise.race([
        window.jupyterapp.commands.execute('notebook:run-all-cells'),
        new Promise(r => setTimeout(() => r('timeout'), 240000))])""")
    cells = page.evaluate(READ_OUTPUTS)
    assert ran is True, f"run all cells returned {ran!r} (False: a cell raised): " + \
        " | ".join(o["text"][-500:] for c in cells for o in c["outputs"] if "Error" in o["text"])
    assert len(cells) == len(committed.cells)
    compared, differ = 0, []
    for i, (cell, shown) in enumerate(zip(committed.cells, cells)):
        if cell.cell_type != "code" or "nbval-ignore-output" in cell.metadata.get("tags", []):
            continue
        lab_out = [(STDOUT, "".join(o["text"] for o in shown["outputs"] if o["mime"] == STDOUT))]
        lab_out = [x for x in lab_out if x[1]] + [(PLAIN, o["text"]) for o in shown["outputs"] if o["mime"] == PLAIN]
        want = [(k, sanitize(t)) for k, t in committed_outputs(cell)]
        got = [(k, sanitize(t)) for k, t in lab_out]
        compared += len(want)
        if got != want:
            differ.append(f"cell {i}: JupyterLab shows {got!r}\n   committed {want!r}")
    print(f"\n{notebook}: {compared} outputs compared, {len(differ)} differ")
    assert compared > 5 and not differ, "\n".join(differ[:5])
    fid, part, value = CHAPTERS[notebook]
    fig = page.locator(f"#{fid}")
    fig.scroll_into_view_if_needed()
    old = json.loads(fig.get_attribute("data-state"))
    fig.locator(f"[data-part={part}]").fill(str(value))
    new = json.loads(fig.get_attribute("data-state"))
    assert new[part] == value != old[part], (old, new)
    assert not errors, errors
    page.evaluate("() => window.jupyterapp.commands.execute('kernelmenu:shutdown')")
    page.close()
    assert [f.read_bytes() for f in files] == before, "JupyterLab rewrote the chapter's files"
