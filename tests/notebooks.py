"""Helpers for the tests: find the course's notebooks and read them."""

from __future__ import annotations

import pathlib

import jupytext
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK_DIRS = ("chapters", "solutions")


def paired_markdown():
    """Every MyST notebook (.md with a jupytext header) in chapters/ and solutions/."""
    out = []
    for d in NOTEBOOK_DIRS:
        for md in sorted((ROOT / d).glob("*.md")):
            if md.read_text().startswith("---\njupytext:"):
                out.append(md)
    return out


def all_ipynb():
    return [p for d in NOTEBOOK_DIRS for p in sorted((ROOT / d).glob("*.ipynb"))]


def read(path):
    return jupytext.read(path)


def config():
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def toc_files():
    """Document names listed in _toc.yml, in order (root first)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    names = [toc["root"]]

    def walk(entries):
        for e in entries:
            if "file" in e:
                names.append(e["file"])
            walk(e.get("sections", []))
            walk(e.get("chapters", []))

    for part in toc.get("parts", []):
        walk(part["chapters"])
    walk(toc.get("chapters", []))
    return names
