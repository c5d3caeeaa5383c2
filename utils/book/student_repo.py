"""Write a student copy of the course: a repository to publish for learners (``bash .ci/student-repo``).

    bash .ci/student-repo DIR --url https://github.com/OWNER/REPO

DIR must not exist or be empty; URL is where the copy will be published (a GitHub
repository: Colab and Kaggle open notebooks from GitHub). The copy is made from the files
git tracks in this checkout, as they are in the working tree (an untracked file is never
published), and is what the student edition of the book shows, as a repository:

* **left out**: ``solutions/``, the instructors' page (``editions.INSTRUCTOR_PAGES``),
  their French catalogues, this command and the tests that compare the two editions
  (``LEFT_OUT``);
* **stripped**, with the functions the student edition's build uses on its downloads
  (``utils/book/course_book.py``): every ``{solution}`` block, every hidden
  ``solution-values`` cell (code and outputs) and every ``:::{container} instructor-only``
  block, from each chapter's ``.md`` and its ``.ipynb`` alike (the pair still matches);
* **rewritten**: ``_config.yml`` and ``_toc.yml`` are the student edition's
  (``editions.student_config``, ``editions.student_toc``; without ``hide_solutions``: nothing
  is left to hide, so the copy's ``bash .ci/build`` and ``bash .ci/build fr`` make its two
  languages, linked to each other) with ``repository.url`` set to URL, so the book's Colab
  and Kaggle buttons open the copy's notebooks; the setup cell (``.ci/setup_cell.py``, then
  every notebook through ``.ci/apply_setup_cell.py``) clones URL; the French catalogues are
  updated from the stripped book (``bash .ci/translations update``, which drops the
  messages of the removed text); ``README.md`` loses its
  ``<!-- instructor-only -->`` ... ``<!-- /instructor-only -->`` spans and shows the text
  of its ``<!-- student-only`` ... ``-->`` comments.

The copy is not a git repository yet: the command prints the steps that publish it.
``tests/test_student_repo.py`` builds the copy with warnings as errors, runs a chapter of
it through the setup cell, and scans it for the exercises' answers.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
USAGE = "bash .ci/student-repo DIR --url https://github.com/OWNER/REPO"
#: Tracked files the copy never gets, besides the instructor pages and their catalogues:
#: this command and its test, and the test that compares the instructor edition with the student one.
LEFT_OUT = (".ci/student-repo", "utils/book/student_repo.py", "tests/test_student_repo.py", "tests/test_editions.py")
#: Folders of MyST notebooks and pages whose solution text is stripped.
STRIPPED_DIRS = ("chapters",)
GITHUB = re.compile(r"^https://github\.com/(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
#: README.md: a span only the instructors' repository shows, and text only the student copy shows.
README_INSTRUCTOR_ONLY = re.compile(r"<!-- instructor-only -->.*?<!-- /instructor-only -->", re.S)
#: Student-only text is a block (``<!-- student-only``, its lines, ``-->``) or inline (``<!-- student-only:TEXT-->``).
README_STUDENT_ONLY = re.compile(r"<!-- student-only(?::(?P<inline>.*?)|[ \t]*\n(?P<block>.*?)\n)-->", re.S)


def _load(name: str, path: pathlib.Path):
    """A module of the book's tooling, by its path (Sphinx and ``bash .ci/build`` load them so too)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


editions = _load("course_editions", ROOT / "utils" / "book" / "editions.py")
course_book = _load("course_book_strip", ROOT / "utils" / "book" / "course_book.py")


class UsageError(Exception):
    """A wrong argument: the message says what was expected and what arrived."""


def github_url(url: str | None) -> str:
    """``url`` as ``https://github.com/OWNER/REPO`` (no ``.git``, no trailing slash)."""
    if not url:
        raise UsageError(f"--url is missing: give the address the copy will be published at. Usage: {USAGE}")
    if not re.match(r"^https?://", url):
        raise UsageError(f"--url must be an http(s) address, https://github.com/OWNER/REPO; got {url!r}")
    m = GITHUB.match(url)
    if m is None:
        raise UsageError("--url must be a GitHub repository, https://github.com/OWNER/REPO (Colab and Kaggle "
                         f"open notebooks from GitHub only, and the book's tests require it); got {url!r}")
    return f"https://github.com/{m['owner']}/{m['repo']}"


def check_target(target: pathlib.Path) -> None:
    if target.exists() and not target.is_dir():
        raise UsageError(f"DIR must be a new or empty folder; {target} exists and is a file")
    if target.is_dir() and any(target.iterdir()):
        raise UsageError(f"DIR must be a new or empty folder; {target} exists and is not empty "
                         f"({len(list(target.iterdir()))} entries)")
    if target.resolve().is_relative_to(ROOT.resolve()):
        raise UsageError(f"DIR must be outside the course's checkout {ROOT}; got {target}")


def tracked_files(root: pathlib.Path = ROOT) -> list[str]:
    """Paths git tracks in ``root`` that exist in the working tree (a deleted file is not copied)."""
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if proc.returncode:
        raise UsageError(f"{root} is not a git checkout (git ls-files: {proc.stderr.decode().strip()})")
    return [p for p in proc.stdout.decode().split("\0") if p and (root / p).is_file()]


def left_out(rel: str) -> bool:
    """Whether the tracked file ``rel`` stays out of the student copy."""
    if rel in LEFT_OUT or rel.startswith("solutions/"):
        return True
    for page in editions.INSTRUCTOR_PAGES:
        if rel.startswith(page + "."):
            return True
    parts = rel.split("/")
    if parts[0] == "locales" and len(parts) > 3 and parts[2] == "LC_MESSAGES":  # locales/LANG/LC_MESSAGES/...
        page = "/".join(parts[3:]).rsplit(".", 1)[0]
        return page.startswith("solutions/") or page in editions.INSTRUCTOR_PAGES
    return False


def strip_page(path: pathlib.Path) -> None:
    """Remove solution blocks, ``solution-values`` cells and instructor-only blocks from a
    MyST page or its notebook, as the student edition's build does to its downloads."""
    if path.suffix == ".ipynb":
        course_book._strip_notebook(path)
    elif path.suffix == ".md":
        text = path.read_text(encoding="utf-8")
        text = course_book.strip_solution_values(text)
        text = course_book.strip_instructor_only(course_book.strip_solutions(text))
        path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def pair_notebook(md: pathlib.Path) -> None:
    """Make a stripped notebook the pair of its stripped ``.md`` again: its markdown cells take
    the ``.md``'s text as jupytext reads it (the blank lines around a removed block), a cell
    left empty goes, and the execution counts run 1, 2, 3... again (a removed
    ``solution-values`` cell leaves a gap; the kept cells' outputs do not depend on it)."""
    import jupytext
    import nbformat

    ipynb = md.with_suffix(".ipynb")
    text = jupytext.read(md)
    nb = nbformat.read(ipynb, as_version=4)
    nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or c.source.strip()]
    kinds, want = [c.cell_type for c in nb.cells], [c.cell_type for c in text.cells]
    if kinds != want:
        raise RuntimeError(f"{md.name}: after stripping, the .md has cells {want} but the .ipynb {kinds}")
    count = 0
    for mine, theirs in zip(nb.cells, text.cells):
        if mine.cell_type == "markdown":
            mine.source = theirs.source
        elif mine.cell_type == "code":
            count += 1
            mine.execution_count = count
            for out in mine.get("outputs", []):
                if out.get("output_type") == "execute_result":
                    out["execution_count"] = count
    nbformat.write(nb, ipynb)


def config_text(url: str) -> str:
    """The copy's ``_config.yml``: the student edition's, published at ``url``."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = dict(config.get("sphinx", {}).get("local_extensions") or {})
    cfg = editions.student_config(config)
    cfg["sphinx"]["local_extensions"] = extensions  # relative to the copy, not to this checkout
    # Nothing is left to hide, and without the flag the copy's `bash .ci/build` makes the edition
    # whose pages link to the French one of `bash .ci/build fr` (the flag would send them to
    # the French student edition's folder, which only `bash .ci/build student fr` fills).
    del cfg["sphinx"]["config"]["hide_solutions"]
    cfg["repository"]["url"] = url
    return ("# The student edition's settings (made by .ci/student-repo from the course's _config.yml).\n"
            "# repository.url is where this copy is published: every Colab and Kaggle link derives from it.\n"
            + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))


def toc_text() -> str:
    toc = editions.student_toc(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    return ("# The student edition's table of contents (made by .ci/student-repo from the course's _toc.yml).\n"
            + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True))


def readme_text(text: str) -> str:
    """README.md for the student copy: without its instructor-only spans, with its student-only text."""
    opens, closes = text.count("<!-- instructor-only -->"), text.count("<!-- /instructor-only -->")
    if opens != closes:
        raise ValueError(f"README.md: {opens} '<!-- instructor-only -->' but {closes} '<!-- /instructor-only -->'")
    text = README_INSTRUCTOR_ONLY.sub("", text)
    text = README_STUDENT_ONLY.sub(lambda m: m["block"] if m["inline"] is None else m["inline"], text)
    if "instructor-only" in text or "<!-- student-only" in text:
        raise ValueError("README.md: an instructor-only or student-only marker is not closed")
    return re.sub(r"\n{3,}", "\n\n", text)


def set_setup_cell(target: pathlib.Path, url: str) -> None:
    """Point the copy's setup cell at ``url`` and copy it into every notebook (the copy's own
    ``.ci/apply_setup_cell.py``, which checks it against ``repository.url``)."""
    cell = target / ".ci" / "setup_cell.py"
    text, n = re.subn(r'^COURSE_REPO = "[^"]*"', f'COURSE_REPO = "{url}"', cell.read_text(encoding="utf-8"), flags=re.M)
    if n != 1:
        raise RuntimeError(f"{cell}: expected one line COURSE_REPO = \"...\", found {n}")
    cell.write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(target / ".ci" / "apply_setup_cell.py")], cwd=target,
                          capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError("copying the setup cell into the copy's notebooks failed:\n" + proc.stdout + proc.stderr)


def update_catalogues(target: pathlib.Path) -> None:
    """The copy's French catalogues, extracted afresh from its stripped pages (the messages of
    removed text go, every other translation stays)."""
    if not (target / "locales").is_dir():
        return
    proc = subprocess.run([sys.executable, str(target / "utils" / "book" / "translations.py"), "update"],
                          cwd=target, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError("updating the copy's French catalogues failed:\n" + (proc.stdout + proc.stderr)[-3000:])


def make(target: pathlib.Path, url: str, log=print) -> list[str]:
    """Write the student copy into ``target`` (new or empty) for publication at ``url``;
    return the copied paths."""
    url = github_url(url)
    check_target(target)
    files = [f for f in tracked_files() if not left_out(f)]
    target.mkdir(parents=True, exist_ok=True)
    for rel in files:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target / rel)
    for rel in files:
        if rel.split("/")[0] in STRIPPED_DIRS and rel.endswith((".md", ".ipynb")):
            strip_page(target / rel)
    for rel in files:
        if rel.split("/")[0] in STRIPPED_DIRS and rel.endswith(".md") and (target / rel).with_suffix(".ipynb").is_file():
            pair_notebook(target / rel)
    (target / "_config.yml").write_text(config_text(url), encoding="utf-8")
    (target / "_toc.yml").write_text(toc_text(), encoding="utf-8")
    if (target / "README.md").is_file():
        (target / "README.md").write_text(readme_text((target / "README.md").read_text(encoding="utf-8")),
                                          encoding="utf-8")
    set_setup_cell(target, url)
    log(f"{len(files)} files copied and stripped; updating the French catalogues (a gettext build, about 10 s)")
    update_catalogues(target)
    return files


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bash .ci/student-repo", usage=USAGE,
                                     description="Write a student copy of the course (no solutions, no instructors' "
                                                 "page; Colab, Kaggle and the setup cell pointing at URL) into DIR.")
    parser.add_argument("dir", metavar="DIR", help="a new or empty folder")
    parser.add_argument("--url", help="the GitHub repository the copy will be published at")
    args = parser.parse_args(argv)
    target = pathlib.Path(args.dir).expanduser().absolute()
    start = time.monotonic()
    try:
        make(target, args.url)
    except UsageError as e:
        print(f"student-repo: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"student-repo: {e}\n{target} is left as it is: remove it before running the command again.",
              file=sys.stderr)
        return 1
    url = github_url(args.url)
    print(f"student copy written to {target} in {time.monotonic() - start:.0f} s. To publish it:\n"
          f"  cd {target}\n"
          "  git init -b main && git add -A && git commit -m 'Student edition'\n"
          f"  git remote add origin {url}.git   # an empty repository, created first on GitHub\n"
          "  git push -u origin main\n"
          "Make the repository public: Colab and Kaggle then open its notebooks from the book's buttons\n"
          f"(bash .ci/build in the copy builds that book into {target / '_build' / 'html'}).\n"
          "Before the first push, choose Settings > Pages > Source: GitHub Actions; its workflow publish.yml then\n"
          f"publishes the book at https://{url.split('/')[-2].lower()}.github.io/{url.split('/')[-1]}/ on every push to main\n"
          "(after a push made first, run 'publish the book' again from the Actions tab).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
