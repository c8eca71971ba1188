"""Setup on real releases that declare their test tooling each in another place (issue #24).

The release with a planted bug as the base commit, its fix on top, validated as a job
would: the test stage runs the suite with a count, from the repository's own command, and
the setup row says where the dev/test dependencies came from. Downloads (cached by
version) and installs from PyPI: run with AGENTBOT_REALREPOS=1, marked `realrepo`.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.report import validation_table
from bot.validation import run_validation
from scripts.realrepos import fix, git, prepare
from scripts.realrepos_setup import SETUP_PROJECTS

pytestmark = [
    pytest.mark.realrepo,
    pytest.mark.skipif(
        os.environ.get("AGENTBOT_REALREPOS") != "1",
        reason="real repositories: set AGENTBOT_REALREPOS=1 (downloads releases, cached)",
    ),
    pytest.mark.timeout(1200),
]

# name -> (where the test command comes from, what the setup row must say it installed from)
EXPECT = {
    "tomlkit": ("default", "dev/test dependencies from: poetry dev groups"),
    "humanize": ("tox (py311)", "dev/test dependencies from: extras tests"),
    "requests-mock": ("tox (py311)", "test-requirements.txt"),
    "iniconfig": ("default", "dependency groups dev; uv.lock (frozen)"),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("realrepos-setup")


@pytest.mark.parametrize("name", sorted(SETUP_PROJECTS))
def test_setup_installs_what_the_release_declares_and_its_tests_run(
    name: str, workdir: Path
) -> None:
    project = SETUP_PROJECTS[name]
    source, installed = EXPECT[name]
    repo, base = prepare(project, workdir)
    fix(project, repo)
    # The runner's CA bundle variable would fail requests-mock's own `verify` test.
    env = {k: v for k, v in os.environ.items() if k not in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    report = run_validation(
        repo, ValidationConfig(), data_dir=workdir / "data", base_sha=base, env=env
    )
    print(f"\n{name}:\n{validation_table(report)}")
    setup = report.gates[0]
    test = next(g for g in report.gates if g.gate_name == "test")
    assert setup.status == "passed", setup.warning
    assert installed in setup.warning
    assert test.source == source
    assert test.status == "passed", report.problems()
    assert report.tests is not None and report.tests.test_count >= 1


UNIT = "const test = require('node:test');\nconst assert = require('node:assert');\n"
UNIT += "test('adds', () => assert.strictEqual(1 + 1, 2));\n"
UNIT += "test('joins', () => assert.strictEqual(['a', 'b'].join(''), 'ab'));\n"
LOCKS = {
    "pnpm@9.12.0": ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n"),
    "yarn@1.22.22": ("yarn.lock", "# yarn lockfile v1\n\n\n"),
}


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
@pytest.mark.parametrize("manager", sorted(LOCKS))
def test_the_declared_package_manager_is_on_path_for_the_repositorys_own_scripts(
    manager: str, workdir: Path
) -> None:
    name = manager.split("@")[0]
    lockfile, lock = LOCKS[manager]
    pkg = {
        "name": f"uses-{name}",
        "version": "1.0.0",
        "packageManager": manager,
        # The repository's own script calls its manager by name: it must be on PATH.
        "scripts": {"test": f"{name} run unit", "unit": "node --test"},
    }
    repo = workdir / f"uses-{name}"
    files = {"package.json": json.dumps(pkg), lockfile: lock, "test/unit.test.js": UNIT}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a project")
    report = run_validation(repo, ValidationConfig(), data_dir=workdir / "data", env=os.environ)
    print(f"\n{manager}:\n{validation_table(report)}")
    setup = report.gates[0]
    test = next(g for g in report.gates if g.gate_name == "test")
    assert setup.status == "passed", setup.command_result
    assert "--prefix" in setup.command and setup.command.endswith(
        f"{name} install --frozen-lockfile"
    )
    assert f"{manager} (from package.json packageManager)" in setup.warning
    assert test.status == "passed", test
    assert report.tests is not None and report.tests.test_count == 2
