"""Each MyST .md and its .ipynb hold the same cells, and every code cell was executed."""

import pytest
from jupytext.compare import compare_notebooks
from notebooks import ROOT, all_ipynb, paired_markdown, read, toc_files

MDS = paired_markdown()


def test_there_are_notebooks():
    assert len(MDS) >= 3, f"expected chapter notebooks, found {MDS}"


@pytest.mark.parametrize("md", MDS, ids=lambda p: str(p.relative_to(ROOT)))
def test_md_matches_ipynb(md):
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{md.name} has no paired {ipynb.name}: run `bash .ci/sync {md.relative_to(ROOT)}`"
    compare_notebooks(read(md), read(ipynb), fmt="md:myst")


@pytest.mark.parametrize("ipynb", all_ipynb(), ids=lambda p: str(p.relative_to(ROOT)))
def test_ipynb_is_executed_in_order(ipynb):
    assert ipynb.with_suffix(".md").exists(), f"{ipynb.name} has no paired .md"
    nb = read(ipynb)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts, f"{ipynb.name} has no code cells"
    assert None not in counts, f"{ipynb.name}: code cell {counts.index(None)} was never executed"
    assert counts == list(range(1, len(counts) + 1)), (
        f"{ipynb.name} was not executed top to bottom in one run: execution counts {counts}"
    )
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error" or "raises-exception" in cell.metadata.get("tags", []), (
                f"{ipynb.name}: code cell {i} stored an error: {out.get('ename')}: {out.get('evalue')}"
            )


def test_every_notebook_is_in_the_toc():
    listed = set(toc_files())
    for md in MDS:
        name = str(md.relative_to(ROOT).with_suffix(""))
        assert name in listed, f"{name} is not listed in _toc.yml"


def test_first_cell_is_the_same_setup_cell_everywhere():
    from notebooks import config

    url = config()["repository"]["url"]
    first = {}
    for md in MDS:
        code = [c for c in read(md).cells if c.cell_type == "code"]
        first[md.name] = code[0].source
        assert f'COURSE_REPO = "{url}"' in code[0].source, f"{md.name}: setup cell does not use the URL in _config.yml"
    assert len(set(first.values())) == 1, "setup cells differ between notebooks: " + ", ".join(first)
