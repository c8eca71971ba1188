"""Setup installs what the stage commands call and every dev/test dependency the repo declares."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from bot.clock import SystemClock
from bot.config import ValidationConfig
from bot.validation import detect_profile
from bot.validation.commands import called_tools
from bot.validation.discovery import candidates
from bot.validation.environment import build_stage_env
from bot.validation.install import SetupPlan, plan_setup
from bot.validation.repo_env import ensure_coverage_py
from tests.test_validation import _closure, _repack, gate, offline_env, validate

PROJECT = '[project]\nname = "x"\nversion = "1"\n'
PIP = {"PATH": "/usr/bin:/bin", "AGENTBOT_INSTALLER": "pip"}


def make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def plan(repo: Path, tmp_path: Path, config: ValidationConfig | None = None) -> SetupPlan:
    profile = detect_profile(repo)
    senv = build_stage_env(repo, profile, tmp_path / "data", PIP, use_venv=True)
    specs = candidates(repo, config or ValidationConfig(), profile)
    top = [s for c in specs.values() for s in dict.fromkeys([*c[:1], *c[-1:]])]
    pre = any(s.pre_commit for s in top)
    return plan_setup(senv, "default", top, pre_commit=pre, installer="pip")


def installed(p: SetupPlan) -> list[str]:
    """Every word of every install step."""
    return [w for s in p.steps for w in shlex.split(s.command)]


def test_called_tools_unwrap_interpreters_runners_and_coverage() -> None:
    assert called_tools("python -m pytest -q") == ["python", "pytest"]
    assert called_tools("python3.11 -X dev -m mypy src") == ["python3.11", "mypy"]
    assert called_tools("uv run --frozen pytest -x && poetry run ruff check .") == [
        "pytest",
        "ruff",
    ]
    assert called_tools("coverage run -m py.test && coverage report") == ["coverage", "pytest"]
    assert called_tools("CI=1 env FOO=2 npx --yes eslint@9 .") == ["eslint"]
    assert called_tools("@python -c 'print(1)' | tee out") == ["python", "tee"]


def test_a_configured_python_m_pytest_gets_pytest_unpinned_and_said(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", {"pyproject.toml": PROJECT})
    cfg = ValidationConfig(test="python -m pytest -q")
    p = plan(repo, tmp_path, cfg)
    assert "pytest" in installed(p)
    assert "not pinned by the repo, latest used: ruff, pytest" in p.notes


def test_makefile_recipes_and_coverage_runs_get_their_tools(tmp_path: Path) -> None:
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT,
            "Makefile": "test:\n\tcoverage run -m pytest\n\tcoverage report\n",
            "requirements-dev.txt": "pytest==8.3.0\n",
        },
    )
    p = plan(repo, tmp_path)
    words = installed(p)
    assert "coverage" in words  # called by the recipe, not declared: latest, and said
    assert "pytest" not in words  # declared in requirements-dev.txt, installed from it
    assert "not pinned by the repo, latest used: ruff, coverage" in p.notes


def test_tox_env_for_the_present_interpreter_with_envpython_and_extras(tmp_path: Path) -> None:
    import sys

    here = f"py3{sys.version_info[1]}"
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT + '[project.optional-dependencies]\nspecial = ["attrs"]\n',
            "tox.ini": "[tox]\nenvlist = py38,"
            + here
            + "\n[testenv:py38]\ncommands = {envpython} -m pytest old\n"
            + f"[testenv:{here}]\nextras = special\ndeps = pytest-mock\n"
            + "commands = {envpython} -m pytest -q {posargs}\n",
        },
    )
    specs = candidates(repo, ValidationConfig(), detect_profile(repo))
    test = specs["test"][0]
    assert test.source == f"tox ({here})"
    assert test.command == "python -m pytest -q"
    assert test.tools == ("python",)  # was `{envpython}`: never on PATH, passed over
    words = installed(plan(repo, tmp_path))
    assert "pytest-mock" in words and "pytest" in words
    assert ".[special]" in words  # the env's extras, with the project


def test_a_tox_env_for_another_implementation_is_not_taken_for_cpython(tmp_path: Path) -> None:
    # add-trailing-comma's envlist: none for 3.11, and PyPy is no nearer than 3.10 is.
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT,
            "tox.ini": "[tox]\nenvlist = py37,py39,py310,pypy3,pre-commit\n"
            + "[testenv]\ncommands = coverage run -m pytest {posargs:tests}\n",
        },
    )
    test = candidates(repo, ValidationConfig(), detect_profile(repo))["test"][0]
    assert test.source == "tox (py310)", test.source


def test_a_tox_env_in_pyprojects_tool_tox_table_is_the_test_command(tmp_path: Path) -> None:
    import sys

    here = f"py3.{sys.version_info[1]}"
    # pallets/click's native tox config: no tox.ini, no tox.toml, no legacy_tox_ini.
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT
            + '[dependency-groups]\ntests = ["pytest"]\n'
            + f'[tool.tox]\nenv_list = ["py3.9", "{here}", "style"]\n'
            + '[tool.tox.env_run_base]\ndependency_groups = ["tests"]\ncommands = [[\n'
            + '    "pytest", "-v", "--basetemp={env_tmp_dir}",\n'
            + '    {replace = "posargs", default = [], extend = true},\n]]\n',
        },
    )
    test = candidates(repo, ValidationConfig(), detect_profile(repo))["test"][0]
    assert test.source == f"tox ({here})"
    # The tmp dir expands in the shell (not quoted), and no empty posargs word is left.
    assert test.command == "pytest -v --basetemp=${TMPDIR:-/tmp}/agentbot-tox", test.command


def test_dev_dependencies_from_every_place_the_repo_declares_them(tmp_path: Path) -> None:
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": '[tool.poetry]\nname = "x"\n'
            + '[tool.poetry.dependencies]\npython = "^3.8"\nrequests = "*"\n'
            + '[tool.poetry.dev-dependencies]\npytest = "^7"\nPyYAML = "*"\n'
            + '[tool.poetry.group.extra.dependencies]\npytest-mock = "^3"\n'
            + '[tool.poetry.group.docs.dependencies]\nsphinx = "*"\n'
            + '[tool.pdm.dev-dependencies]\nlint = ["flake8-bugbear"]\n'
            + '[tool.hatch.envs.default]\ndependencies = ["hypothesis"]\n'
            + '[build-system]\nrequires = ["poetry-core"]\n',
            "noxfile.py": "import nox\n\n@nox.session\ndef tests(session):\n"
            + '    session.install("-r", "tests/requirements.txt")\n'
            + '    session.run("pytest")\n',
            "tests/requirements.txt": "freezegun\n",
            ".github/workflows/ci.yml": "on: [push, pull_request]\njobs:\n  t:\n    steps:\n"
            + "      - run: python -m pip install --upgrade pip respx -r tests/requirements.txt\n"
            + "      - run: pytest\n",
            ".github/workflows/downstream.yml": "on: push\njobs:\n  d:\n    steps:\n"
            + "      - uses: actions/checkout@v4\n        with:\n          repository: o/app\n"
            + "      - run: pip install django\n",
        },
    )
    p = plan(repo, tmp_path)
    words = installed(p)
    assert (
        "dev/test dependencies from: poetry dev groups; PDM dev group lint; hatch env default;"
        " nox (tests) deps; CI workflow pip install lines"
    ) in p.notes
    for dep in ("pytest", "PyYAML", "pytest-mock", "flake8-bugbear", "hypothesis",
                "respx"):  # fmt: skip
        assert dep in words or f"'{dep}'" in words or any(dep in w for w in words), dep
    assert "tests/requirements.txt" in words
    assert "sphinx" not in words and "django" not in words  # docs group; another project's CI


def test_a_downstream_projects_workflow_gives_no_stage_command(tmp_path: Path) -> None:
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT,
            ".github/workflows/downstream.yml": "on: pull_request\njobs:\n  d:\n    steps:\n"
            + "      - uses: actions/checkout@v4\n        with:\n          repository: o/app\n"
            + "      - run: pytest tests/integration\n",
            ".github/workflows/nightly.yml": "on:\n  schedule:\n    - cron: '0 0 * * *'\n"
            + "jobs:\n  n:\n    steps:\n      - run: pytest --slow\n",
        },
    )
    specs = candidates(repo, ValidationConfig(), detect_profile(repo))
    assert [s.source for s in specs["test"]] == ["default"]


# --- real installs (uv, an offline wheelhouse) ------------------------------------------------


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    dest = tmp_path_factory.mktemp("wheels")
    for dist in _closure(("pytest", "coverage", "setuptools", "pre-commit", "ruff")):
        _repack(dist, dest)
    return offline_env(dest)


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}  # fmt: skip


def git_repo(root: Path, files: dict[str, str]) -> Path:
    make(root, files)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=GIT_ENV)
    return root


SMALL = {
    "pyproject.toml": PROJECT + "[tool.setuptools]\npy-modules = ['calc']\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


@pytest.mark.slow
def test_python_m_pytest_from_config_runs_the_tests_without_a_declared_pytest(
    tmp_path: Path, wheels: dict[str, str]
) -> None:
    repo = git_repo(tmp_path / "small", SMALL)
    cfg = ValidationConfig(format=None, lint=None, typecheck=None, test="python -m pytest -q")
    report = validate(repo, tmp_path / "data", wheels, config=cfg)
    test = gate(report, "test")
    assert test.status == "passed", report
    assert report.tests is not None and report.tests.test_count == 1
    assert "pytest" in gate(report, "setup").warning  # "not pinned by the repo, latest used"


@pytest.mark.slow
def test_a_runner_setup_cannot_provide_leaves_the_stage_unverified(
    tmp_path: Path, wheels: dict[str, str]
) -> None:
    repo = git_repo(tmp_path / "small", SMALL)
    cfg = ValidationConfig(setup="true", format=None, lint=None, typecheck=None,
                           test="python -m pytest -q")  # fmt: skip
    report = validate(repo, tmp_path / "data", wheels, config=cfg)
    test = gate(report, "test")
    assert test.status == "unverified" and test.missing_tool == "pytest"
    assert (
        test.warning.startswith("unverified")
        and "`pytest` is not installed; declare it in" in test.warning
    )
    assert not report.passed


@pytest.mark.slow
def test_coverage_goes_into_a_uv_venv_with_uv(tmp_path: Path, wheels: dict[str, str]) -> None:
    repo = git_repo(tmp_path / "small", SMALL)
    cfg = ValidationConfig(format=None, lint=None, typecheck=None)
    report = validate(repo, tmp_path / "data", wheels, config=cfg)
    assert gate(report, "setup").status == "passed", report
    senv = build_stage_env(repo, detect_profile(repo), tmp_path / "data", wheels, use_venv=True)
    assert senv.venv is not None and not (senv.venv / "bin" / "pip").exists()  # uv made it
    python = str(senv.venv / "bin" / "python")
    why = ensure_coverage_py(senv, python, timeout=120, clock=SystemClock())
    assert why == ""
    subprocess.run([python, "-c", "import coverage"], check=True)


def test_pnpm_and_yarn_at_their_declared_versions_on_the_stages_path(tmp_path: Path) -> None:
    pkg = {"name": "x", "packageManager": "pnpm@9.12.0+sha512.abc", "scripts": {"test": "pnpm t"}}
    repo = make(tmp_path / "p", {"package.json": json.dumps(pkg), "pnpm-lock.yaml": ""})
    p = plan(repo, tmp_path)
    senv = build_stage_env(repo, detect_profile(repo), tmp_path / "data", PIP, use_venv=True)
    folder = senv.packages / "pm" / "pnpm@9.12.0"
    assert shlex.split(p.steps[0].command)[-3:] == ["--prefix", str(folder), "pnpm@9.12.0"]
    assert p.steps[1].command == "pnpm install --frozen-lockfile"
    path = senv.env["PATH"].split(":")
    assert path[:2] == [str(repo / "node_modules/.bin"), str(folder / "bin")]
    on_path = "installed from the npm registry, on PATH for the repository's own scripts"
    assert p.notes == [f"pnpm@9.12.0 (from package.json packageManager), {on_path}"]
    yarn = make(tmp_path / "y", {"package.json": json.dumps({"packageManager": "yarn@4.5.0"}),
                                 "yarn.lock": ""})  # fmt: skip
    berry = plan(yarn, tmp_path)
    assert berry.steps[0].command.endswith(" @yarnpkg/cli-dist@4.5.0")
    assert berry.steps[1].command == "yarn install --immutable"
    # The row names the manager first, then the npm package that ships it.
    assert berry.notes == [
        f"yarn@4.5.0 as @yarnpkg/cli-dist@4.5.0 (from package.json packageManager), {on_path}"
    ]
    classic = make(tmp_path / "c", {"package.json": "{}", "yarn.lock": ""})
    assert plan(classic, tmp_path).steps[0].command.endswith(" yarn@1")


def test_package_caches_are_per_repository_outside_home(tmp_path: Path) -> None:
    one = git_repo(tmp_path / "one", SMALL)
    two = git_repo(tmp_path / "two", SMALL)
    for ws in (one, two):
        url = "https://x-access-token:t@github.com/Octo/Small.git"
        subprocess.run(["git", "-C", str(ws), "remote", "add", "origin", url], check=True)
    other = git_repo(tmp_path / "other", SMALL)
    envs = [
        build_stage_env(ws, detect_profile(ws), tmp_path / "data", PIP, use_venv=True)
        for ws in (one, two, other)
    ]
    assert envs[0].packages == envs[1].packages != envs[2].packages
    assert envs[0].env["UV_CACHE_DIR"] == str(envs[0].packages / "uv")
    assert envs[0].env["npm_config_cache"] == str(envs[0].packages / "npm")
    # Cargo's registry and git checkouts too, not in the job's throwaway HOME.
    assert envs[0].env["CARGO_HOME"] == str(envs[0].packages / "cargo")
    # Each cache is writable in a stage; the package managers and other jobs' venvs are not.
    assert envs[0].packages / "uv" in envs[0].writable
    assert envs[0].packages not in envs[0].writable
    assert envs[0].packages / "pm" not in envs[0].writable
    assert envs[0].packages / "pm" in envs[0].setup_writable
    assert envs[1].venv not in envs[0].writable
    assert envs[0].venv != envs[1].venv  # a venv per workspace, the downloads shared


@pytest.mark.slow
def test_a_test_submodule_is_initialised_at_its_recorded_commit(
    tmp_path: Path, wheels: dict[str, str]
) -> None:
    from tests.realrepos.githttp import serve

    with serve(tmp_path / "http") as http:
        bare = http.root / "fixtures.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
        data = git_repo(tmp_path / "fixtures", {"numbers.txt": "1 2 3\n"})
        head = ["git", "-C", str(data), "rev-parse", "HEAD"]
        recorded = subprocess.run(head, capture_output=True, text=True, check=True).stdout.strip()
        make(data, {"numbers.txt": "4 5 6\n"})  # a later commit the checkout does not record
        subprocess.run(["git", "-C", str(data), "commit", "-qam", "later"], check=True, env=GIT_ENV)
        subprocess.run(["git", "-C", str(data), "push", "-q", str(bare), "HEAD:refs/heads/main"],
                       check=True)  # fmt: skip
        url = http.publish(bare)
        test = "from pathlib import Path\n\n\ndef test_data():\n"
        test += "    assert Path('tests/data/numbers.txt').read_text() == '1 2 3\\n'\n"
        repo = git_repo(tmp_path / "app", {**SMALL, "tests/test_data.py": test})
        subprocess.run(["git", "-C", str(repo), "submodule", "add", "-q", url, "tests/data"],
                       check=True, env=GIT_ENV)  # fmt: skip
        subprocess.run(["git", "-C", str(repo / "tests/data"), "checkout", "-q", recorded],
                       check=True)  # fmt: skip
        subprocess.run(["git", "-C", str(repo), "commit", "-qam", "data"], check=True, env=GIT_ENV)
        fresh = tmp_path / "fresh"  # a clone, as a job's workspace is: the submodule left empty
        subprocess.run(["git", "clone", "-q", str(repo), str(fresh)], check=True)
        assert not (fresh / "tests/data/numbers.txt").exists()
        cfg = ValidationConfig(format=None, lint=None, typecheck=None)
        report = validate(fresh, tmp_path / "data", wheels, config=cfg)
    setup = gate(report, "setup")
    assert "git submodule update --init --recursive" in setup.command
    assert gate(report, "test").status == "passed", report
    assert report.tests is not None and report.tests.test_count == 2


def test_the_action_keeps_the_package_caches_keyed_by_lockfiles(tmp_path: Path) -> None:
    import yaml

    steps = yaml.safe_load(Path("action.yml").read_text())["runs"]["steps"]
    cache = next(s for s in steps if s.get("name") == "Restore the repository's package caches")
    assert str(cache["uses"]).startswith("actions/cache@")
    run = next(s for s in steps if s.get("id") == "run")
    assert steps.index(cache) < steps.index(run)
    data_dir = run["env"]["AGENTBOT_DATA_DIR"]
    repo = make(tmp_path / "r", {"pyproject.toml": PROJECT})
    senv = build_stage_env(repo, detect_profile(repo), tmp_path / "d", PIP, use_venv=True)
    assert cache["with"]["path"] == f"{data_dir}/{senv.packages.parent.name}"
    for lockfile in ("uv.lock", "poetry.lock", "pnpm-lock.yaml", "yarn.lock", "package-lock.json"):
        assert f"'**/{lockfile}'" in cache["with"]["key"], lockfile


def test_the_action_caches_agentbots_install_and_runs_it() -> None:
    """A restored venv skips the install; the run step uses that venv's agentbot (issue #31)."""
    import yaml

    steps = yaml.safe_load(Path("action.yml").read_text())["runs"]["steps"]
    by_id = {s.get("id"): s for s in steps}
    cache, run = by_id["install-cache"], by_id["run"]
    assert "${{ runner.temp }}/agentbot-venv" in cache["with"]["path"]
    assert cache["with"]["key"] == "${{ steps.install-key.outputs.key }}"
    install = next(s for s in steps if s.get("name") == "Install agentbot")
    assert install["env"]["CACHE_HIT"] == "${{ steps.install-cache.outputs.cache-hit }}"
    assert 'if [ "$CACHE_HIT" != true ]' in install["run"]
    assert steps.index(cache) < steps.index(install) < steps.index(run)
    assert 'export PATH="$AGENTBOT_BIN:$PATH"' in run["run"]


def test_the_type_check_is_the_repositorys_own_script_under_any_name(tmp_path: Path) -> None:
    scripts = {"build": "tsc -p .", "check": "svelte-check --tsconfig ./tsconfig.json"}
    repo = make(tmp_path / "r", {"package.json": json.dumps({"scripts": scripts}),
                                 "tsconfig.json": "{}"})  # fmt: skip
    specs = candidates(repo, ValidationConfig(), detect_profile(repo))
    assert specs["typecheck"][0].command == "npm run check --ignore-scripts"
    assert specs["typecheck"][-1].command == "tsc --noEmit"  # only the last resort


def test_a_gem_tested_with_minitest_through_rake_gets_rake_test(tmp_path: Path) -> None:
    rakefile = 'require "rake/testtask"\nRake::TestTask.new(:test) { |t| t.libs << "test" }\n'
    gem = make(tmp_path / "g", {"Gemfile": "source 'https://rubygems.org'\n",
                                "Rakefile": rakefile, "test/test_x.rb": ""})  # fmt: skip
    assert detect_profile(gem).defaults["test"].command == "bundle exec rake test"
    specs = make(tmp_path / "s", {"Gemfile": "", "Rakefile": rakefile, "spec/x_spec.rb": ""})
    assert detect_profile(specs).defaults["test"].command == "bundle exec rspec"


def test_tox4_env_list_and_pre_commit_inside_an_env(tmp_path: Path) -> None:
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT + '[project.optional-dependencies]\ntests = ["freezegun"]\n',
            "tox.ini": "[tox]\nenv_list =\n    lint\n    py{313, 312, 311, 310}\n"
            "[testenv]\nextras =\n    tests\ncommands =\n    {envpython} -m pytest \\\n"
            "      --cov x \\\n      {posargs}\n"
            "[testenv:lint]\ndeps = pre-commit\ncommands = pre-commit run --all-files\n",
            "oldest-requirements.txt": "requests==2.0\n",
            "rtfd-requirements.txt": "sphinx\n",
        },
    )
    specs = candidates(repo, ValidationConfig(), detect_profile(repo))
    assert specs["test"][0].source.startswith("tox (py3")
    assert specs["test"][0].command == "python -m pytest --cov x"
    assert specs["lint"][0].source == "tox (lint)" and specs["lint"][0].pre_commit
    p = plan(repo, tmp_path)
    words = installed(p)
    assert "pre-commit" in words and ".[tests]" in words
    assert "oldest-requirements.txt" not in words and "rtfd-requirements.txt" not in words
    assert "install-hooks" in p.steps[-1].command


def test_pdm_lock_pins_the_dev_groups_as_constraints(tmp_path: Path) -> None:
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT + '[tool.pdm.dev-dependencies]\ntest = ["pytest>=7"]\n',
            "pdm.lock": '[[package]]\nname = "pytest"\nversion = "8.1.1"\n',
        },
    )
    p = plan(repo, tmp_path)
    words = installed(p)
    constraints = Path(words[words.index("-c") + 1])
    assert constraints.read_text() == "pytest==8.1.1\n"
    assert "dev/test dependencies from: pdm.lock (as constraints); PDM dev group test" in p.notes


def test_the_setup_row_names_what_it_installs_and_where_from(tmp_path: Path) -> None:
    poetry = '[tool.poetry.group.dev.dependencies]\npytest = "^8"\npytest-mock = "*"\n'
    repo = make(tmp_path / "r", {"pyproject.toml": PROJECT + poetry})
    notes = plan(repo, tmp_path).notes
    assert "dev/test dependencies from: poetry dev groups" in notes
    assert "installed for the stages: pytest, pytest-mock, ruff" in notes  # and the linter
    dev = "-r base.txt\nPyYAML==6.0  # yaml\n"
    reqs = make(tmp_path / "q", {"pyproject.toml": PROJECT, "requirements-dev.txt": dev})
    assert "installed for the stages: pyyaml, ruff, pytest" in plan(reqs, tmp_path).notes
