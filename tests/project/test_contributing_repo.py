"""Repository hygiene a contributor relies on: the GitHub workflows, the pre-commit config, the PR template.

The workflows cannot run here, so actionlint (from PyPI, in the test dependency group) checks them, and the
commands they run are checked against the nox sessions and the README.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _tool(name: str) -> str:
    """A command installed with the test dependencies (next to this Python, or on PATH)."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is not installed; it is in pyproject.toml's test dependency group"
    return found


def test_workflows_pass_actionlint() -> None:
    assert {w.name for w in WORKFLOWS} >= {"tests.yml", "deploy.yml"}
    result = subprocess.run(
        [_tool("actionlint"), "-shellcheck=", "-pyflakes=", *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_pass_zizmor() -> None:
    """The workflows' security audit (unpinned actions, excessive permissions, persisted credentials...)."""
    result = subprocess.run(
        [_tool("zizmor"), "--offline", str(ROOT / ".github" / "workflows")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_action_is_pinned_by_commit_sha() -> None:
    for workflow in WORKFLOWS:
        jobs = yaml.safe_load(workflow.read_text())["jobs"]
        for job in jobs.values():
            for step in job.get("steps", []):
                if "uses" in step:
                    action, _, ref = step["uses"].partition("@")
                    assert len(ref) == 40, f"{workflow.name}: {action} is not pinned by commit SHA"
                    assert all(c in "0123456789abcdef" for c in ref), step["uses"]


def test_deploy_waits_for_the_tests_and_only_the_deploy_job_may_write_pages() -> None:
    workflow = yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text())
    tests = yaml.safe_load((ROOT / ".github/workflows/tests.yml").read_text())
    assert "workflow_call" in tests[True]
    jobs = workflow["jobs"]
    assert jobs["tests"]["uses"] == "./.github/workflows/tests.yml"
    assert jobs["build"]["needs"] == "tests"
    assert jobs["deploy"]["needs"] == "build"
    assert workflow["permissions"] == {}
    for name, job in jobs.items():
        granted = job.get("permissions", {})
        if name == "deploy":
            assert granted == {"pages": "write", "id-token": "write"}
        else:
            assert set(granted.values()) <= {"read"}, name


def test_no_checkout_keeps_credentials_and_pull_requests_get_no_token_or_secret() -> None:
    """A pull request's lessons run in the build: a checkout that kept the token in .git/config published it
    through a symbolic link (issue 24). Every checkout drops it; the workflow that builds pull requests
    grants read access at most, uses no secret and never runs with the base repository's rights."""
    for workflow in WORKFLOWS:
        data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
        for name, job in data["jobs"].items():
            for step in job.get("steps", []):
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert step.get("with", {}).get("persist-credentials") is False, (workflow.name, name)
    text = (ROOT / ".github/workflows/tests.yml").read_text(encoding="utf-8")
    tests = yaml.safe_load(text)
    assert "pull_request_target" not in tests[True]
    assert tests["permissions"] == {}
    for name, job in tests["jobs"].items():
        assert set(job.get("permissions", {}).values()) <= {"read"}, name
        assert "environment" not in job, name
    assert "secrets." not in text


def test_actionlint_would_catch_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses:\n")
    result = subprocess.run([_tool("actionlint"), str(broken)], capture_output=True, text=True, check=False)
    assert result.returncode != 0


def test_pre_commit_config_is_valid_and_checks_lessons() -> None:
    config = ROOT / ".pre-commit-config.yaml"
    result = subprocess.run(
        [_tool("pre-commit"), "validate-config", str(config)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    hooks = {h["id"]: h for repo in yaml.safe_load(config.read_text())["repos"] for h in repo["hooks"]}
    assert {"ruff-check", "ruff-format", "codespell", "trailing-whitespace", "lesson-check"} <= set(hooks)
    assert hooks["lesson-check"]["entry"] == "python3 dev.py check"


def _run_lines(workflow: Path) -> list[str]:
    jobs = yaml.safe_load(workflow.read_text())["jobs"]
    return [step["run"] for job in jobs.values() for step in job.get("steps", []) if "run" in step]


def test_tests_workflow_runs_the_readme_test_command_on_pull_requests() -> None:
    workflow = yaml.safe_load((ROOT / ".github/workflows/tests.yml").read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as True
    runs = "\n".join(_run_lines(ROOT / ".github/workflows/tests.yml"))
    script = (ROOT / ".ci" / "run").read_text() if "bash .ci/run" in runs else runs
    assert "\npython3 dev.py\n" in f"\n{script.strip()}\n"
    assert "| run every test and check | `python3 dev.py` |" in (ROOT / "README.md").read_text()


def test_deploy_workflow_commands_match_the_nox_sessions() -> None:
    """The PDF step passes options the pdf session's command line accepts, into the site it publishes."""
    runs = _run_lines(ROOT / ".github/workflows/deploy.yml")
    assert "python3 dev.py build" in runs
    pdf = next(r for r in runs if r.startswith("python3 dev.py pdf"))
    options = shlex.split(pdf.split(" -- ", 1)[1])
    help_text = subprocess.run(
        [sys.executable, "-m", "course.pdf", "--help"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    for option in (o for o in options if o.startswith("--")):
        assert option in help_text
    output = options[options.index("--output") + 1]
    workflow = yaml.safe_load((ROOT / ".github/workflows/deploy.yml").read_text())
    paths = [
        s["with"]["path"] for s in workflow["jobs"]["build"]["steps"] if "with" in s and "path" in s["with"]
    ]
    assert "site" in paths
    assert output.startswith("site/")
    noxfile = (ROOT / "noxfile.py").read_text()
    assert "def pdf(" in noxfile
    assert "def build(" in noxfile


def test_pull_request_template_has_a_short_checklist() -> None:
    template = (ROOT / ".github" / "pull_request_template.md").read_text()
    boxes = [line for line in template.splitlines() if line.startswith("- [ ]")]
    assert 3 <= len(boxes) <= 8
    assert "python3 dev.py" in template


def _locked_versions() -> dict[str, set[str]]:
    import tomllib

    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    versions: dict[str, set[str]] = {}
    for package in lock["package"]:
        versions.setdefault(package["name"], set()).add(str(package.get("version")))
    return versions


def test_pre_commit_runs_the_ruff_and_codespell_that_nox_runs() -> None:
    """One ruff for the commit hook and the lint session: two versions format the same file two ways."""
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    revs = {repo["repo"].rsplit("/", 1)[-1]: repo.get("rev", "") for repo in config["repos"]}
    locked = _locked_versions()
    assert revs["ruff-pre-commit"].removeprefix("v") in locked["ruff"], (revs, locked["ruff"])
    assert revs["codespell"].removeprefix("v") in locked["codespell"], (revs, locked["codespell"])


def test_every_dependency_is_locked_with_hashes_and_the_tools_too() -> None:
    lock = (ROOT / "uv.lock").read_text(encoding="utf-8")
    assert lock.count('hash = "sha256:') > 100  # every wheel and sdist of every locked package
    tools = (ROOT / "tools" / "requirements.txt").read_text(encoding="utf-8")
    pins = [line for line in tools.splitlines() if "==" in line]
    assert {line.split("==")[0] for line in pins} >= {"nox", "uv"}
    assert all(line.rstrip().endswith("\\") for line in pins), "each pin is followed by its hashes"
    nox_sessions = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    assert '"uv", "sync", "--locked"' in nox_sessions
    assert "--require-hashes" in (ROOT / "dev.py").read_text(encoding="utf-8")


def test_dependabot_watches_python_npm_and_actions() -> None:
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    watched = {(u["package-ecosystem"], u["directory"]) for u in config["updates"]}
    assert watched >= {("uv", "/"), ("pip", "/tools"), ("npm", "/"), ("github-actions", "/")}
