"""The GitHub workflows (``.github/workflows/``) are valid and run the README's commands.

``tests.yml`` runs every test on every push and pull request with ``bash .ci/run`` (the script the
course's CI runs: ``.ci/setup``, then README's test command); ``publish.yml`` builds the site with
``bash .ci/site`` on every push to main and deploys it to GitHub Pages as Jupyter Book 1's
documentation describes (upload-pages-artifact, then deploy-pages). Both are validated offline
against GitHub's workflow schema, which ``check-jsonschema`` ships (``--builtin-schema
vendor.github-workflows``); no second list of setup steps may appear in them.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from notebooks import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
FILES = ("tests.yml", "publish.yml")


def workflow(name):
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def steps(data):
    return [step for job in data["jobs"].values() for step in job.get("steps", [])]


def runs(data):
    return [step["run"].strip() for step in steps(data) if "run" in step]


def uses(data):
    return [step["uses"].split("@")[0] for step in steps(data) if "uses" in step]


def readme_commands():
    """The commands of README's first ``bash`` block (section "The two commands"), without comments."""
    block = re.search(r"## The two commands.*?```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_workflows_are_valid_github_workflows():
    exe = shutil.which("check-jsonschema", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    assert exe, "check-jsonschema is not installed (pip install -r requirements.txt)"
    proc = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", *(str(WORKFLOWS / f) for f in FILES)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_test_workflow_runs_the_readmes_test_command_on_every_push():
    data = workflow("tests.yml")
    assert set(data["on"]) == {"push", "pull_request"} and data["on"]["push"] is None
    assert runs(data) == ["bash .ci/run"], "one command, the CI's own: no second list of setup steps to drift"
    test_command = readme_commands()[1]
    assert test_command == "bash .ci/test", readme_commands()
    run_script = (ROOT / ".ci" / "run").read_text()
    assert "bash .ci/setup" in run_script and re.search(r"^bash \.ci/test\b", run_script, re.M), \
        ".ci/run must set up and then run README's test command"
    assert {"actions/checkout", "actions/setup-python", "actions/cache", "actions/upload-artifact"} <= set(uses(data))
    python = next(s for s in steps(data) if s.get("uses", "").startswith("actions/setup-python"))
    assert str(python["with"]["python-version"]) == "3.11"
    cache = next(s for s in steps(data) if s.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == ".venv" and "requirements.txt" in cache["with"]["key"]
    report = next(s for s in steps(data) if s.get("uses", "").startswith("actions/upload-artifact"))
    assert report.get("if") == "always()"
    assert report["with"]["path"] == "test-report*.xml"
    assert "--junitxml=test-report.xml" in data["jobs"]["test"]["env"]["PYTEST_ADDOPTS"]
    assert "test-report-second.xml" in run_script, "the second path's report must not overwrite the first's"


def test_the_publish_workflow_builds_the_site_and_deploys_it_to_pages():
    data = workflow("publish.yml")
    assert data["on"]["push"] == {"branches": ["main"]}
    assert data["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert data["concurrency"]["group"] == "pages"
    [command] = runs(data)
    assert re.fullmatch(r"bash \.ci/site (\S+)", command), command
    folder = command.split()[-1]
    upload = next(s for s in steps(data) if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == folder, "the artifact must be the folder .ci/site wrote"
    deploy = data["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    assert "bash .ci/site" in (ROOT / "README.md").read_text(), "README must describe the command that publishes"
    assert re.search(r"^exec .*publish_site\.py", (ROOT / ".ci" / "site").read_text(), re.M)


@pytest.mark.parametrize("name", FILES)
def test_the_workflows_use_released_action_versions(name):
    for action in [s["uses"] for s in steps(workflow(name)) if "uses" in s]:
        assert re.fullmatch(r"actions/[\w-]+@v\d+", action), f"{name}: pin a released major version, got {action}"
