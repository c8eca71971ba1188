"""Language profiles (the default stage commands) and the setup plan each repository gets."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from bot.config import ValidationConfig
from bot.validation import detect_profile
from bot.validation.discovery import candidates
from bot.validation.environment import build_stage_env
from bot.validation.install import SetupPlan, fingerprint, plan_setup
from bot.validation.stage import StageSpec


def make(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


PROJECT = '[project]\nname = "x"\nversion = "1"\n'
PIP = {"PATH": "/usr/bin:/bin", "AGENTBOT_INSTALLER": "pip"}


def plan(repo: Path, tmp_path: Path, env: dict[str, str] | None = None) -> SetupPlan:
    """The zero-config setup plan of `repo`, with the specs discovery would choose first."""
    profile = detect_profile(repo)
    senv = build_stage_env(repo, profile, tmp_path / "data", env or PIP, use_venv=True)
    specs = candidates(repo, ValidationConfig(), profile)
    top = [c[0] for c in specs.values() if c]
    installer = (env or PIP).get("AGENTBOT_INSTALLER", "")
    pre = any(s.pre_commit for s in top)
    return plan_setup(senv, "default", top, pre_commit=pre, installer=installer)


def words(p: SetupPlan, index: int) -> list[str]:
    return shlex.split(p.steps[index].command)


def test_python_defaults_lint_with_ruffs_default_rules_and_format_only_when_adopted(
    tmp_path: Path,
) -> None:
    repo = make(tmp_path / "r", {"pyproject.toml": PROJECT})
    p = detect_profile(repo)
    assert p.name == "python" and p.venv
    lint = p.defaults["lint"]
    # No ruff config: ruff's classic default rules (pyflakes-class bugs), named, as JSON.
    assert lint.command == "ruff check --no-fix --output-format json --select E4,E7,E9,F ."
    assert lint.resolve(["a.py", "README.md"]) == (
        "ruff check --no-fix --output-format json --select E4,E7,E9,F --force-exclude a.py"
    )
    assert lint.fixer(["a.py"]) == "ruff check -q --fix --no-unsafe-fixes --force-exclude a.py"
    assert lint.resolve(["README.md"]) is None  # nothing it checks in the change
    assert "format" not in p.defaults and "no formatter adopted" in p.note("format")
    assert "typecheck" not in p.defaults and "mypy is not configured" in p.note("typecheck")
    assert p.defaults["test"].command == "pytest -q -p no:cacheprovider"
    black = detect_profile(make(tmp_path / "b", {"pyproject.toml": PROJECT + "[tool.black]\n"}))
    assert black.defaults["format"].resolve(["x.py"]) == "black --check x.py"
    ruff = make(tmp_path / "f", {"pyproject.toml": PROJECT + "[tool.ruff.format]\n"})
    assert detect_profile(ruff).defaults["format"].command == "ruff format --check ."
    # The repo's own ruff config decides the rules.
    assert "--select" not in detect_profile(ruff).defaults["lint"].command


def test_mypy_runs_where_configured_on_its_files_or_the_package_folder(tmp_path: Path) -> None:
    files = make(tmp_path / "a", {"pyproject.toml": PROJECT + '[tool.mypy]\nfiles = ["src"]\n'})
    assert detect_profile(files).defaults["typecheck"].command == "mypy"
    src = make(tmp_path / "b", {"pyproject.toml": PROJECT + "[tool.mypy]\n", "src/x/a.py": ""})
    assert detect_profile(src).defaults["typecheck"].command == "mypy src"
    flat = make(tmp_path / "c", {"setup.cfg": "[mypy]\nstrict = True\n"})
    assert detect_profile(flat).defaults["typecheck"].command == "mypy ."


def test_python_setup_installs_the_project_extras_and_only_the_missing_tools(
    tmp_path: Path,
) -> None:
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT
            + '[project.optional-dependencies]\ndev = ["ruff==0.5.0"]\ntest = ["pytest-cov"]\n'
            + 'docs = ["sphinx"]\n',
        },
    )
    p = plan(repo, tmp_path)
    # Tools before the project: the project's own install comes last and wins.
    assert [s.flag for s in p.steps] == ["venv", "", "project"]
    assert words(p, 0)[1:3] == ["-m", "venv"]  # pip: the stdlib venv
    install = words(p, 2)
    assert install[1:5] == ["-m", "pip", "install", "-q"]
    assert install[install.index("-e") + 1] == ".[test,dev]"
    # The flat-layout fallback installs the declared dependencies without the project.
    assert p.steps[2].fallback is not None and "-e" not in shlex.split(p.steps[2].fallback)
    assert "ruff==0.5.0" in shlex.split(p.steps[2].fallback)
    # ruff comes pinned by `dev`; pytest-cov is not pytest, so pytest is added, unpinned.
    assert words(p, 1)[-1:] == ["pytest"]
    assert p.notes == [
        "uv not found: installing with pip",
        "dev/test dependencies from: extras test, dev",
        "installed for the stages: pytest-cov, ruff, pytest",
        "not pinned by the repo, latest used: pytest",
    ]


def test_python_setup_with_uv_requirements_groups_and_repo_pins(tmp_path: Path) -> None:
    repo = make(
        tmp_path / "r",
        {
            "requirements.txt": "requests==2.*\n",
            "requirements-dev.txt": "pytest>=8\n",
            "docs-requirements.txt": "sphinx\n",
            "requirements/lint.txt": "ruff==0.4.4\n",
            "mypy.ini": "[mypy]\nstrict = True\n",
        },
    )
    p = plan(repo, tmp_path, {"PATH": "/usr/bin:/bin"})
    assert "uv" in words(p, 0)[0] and words(p, 0)[1] == "venv"
    install = words(p, 1)
    assert install[1:3] == ["pip", "install"] and "-e" not in install  # nothing to build
    # Test/dev requirement files go in (not docs); ruff comes at the version the repo pins.
    assert install[install.index("-r") :] == [
        "-r", "requirements-dev.txt", "-r", "requirements.txt", "ruff==0.4.4", "mypy",
    ]  # fmt: skip
    assert p.notes == [
        "dev/test dependencies from: requirements-dev.txt; requirements.txt",
        "installed for the stages: pytest, requests, ruff, mypy",  # not sphinx (docs)
        "not pinned by the repo, latest used: mypy",
    ]
    groups = make(
        tmp_path / "g",
        {
            "pyproject.toml": PROJECT
            + '[dependency-groups]\ntest = ["pytest", {include-group = "typing"}]\n'
            + 'typing = ["mypy==1.10"]\n[tool.mypy]\n',
            "uv.lock": "version = 1\n",
        },
    )
    p = plan(groups, tmp_path, {"PATH": "/usr/bin:/bin"})
    sync = p.steps[-1].command
    assert "uv sync --frozen --inexact" in sync and "--group test --group typing" in sync
    assert sync.startswith("UV_PROJECT_ENVIRONMENT=")
    assert p.steps[-1].fallback == sync + " --no-install-project"
    # The groups come from the lock (sync), not again unpinned from pyproject.
    assert all("pytest" not in shlex.split(s.command) for s in p.steps[:-1])


def test_poetry_lock_pins_versions_as_constraints(tmp_path: Path) -> None:
    lock = '[[package]]\nname = "attrs"\nversion = "23.1.0"\n'
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": '[tool.poetry]\nname = "x"\n[tool.poetry.group.dev.dependencies]\n'
            + 'pytest = "^7"\n[build-system]\nrequires = ["poetry-core"]\n',
            "poetry.lock": lock,
        },
    )
    p = plan(repo, tmp_path)
    install = words(p, 2)
    constraints = Path(install[install.index("-c") + 1])
    assert constraints.read_text() == "attrs==23.1.0\n"


def test_tox_env_commands_and_deps_come_before_the_defaults(tmp_path: Path) -> None:
    repo = make(
        tmp_path / "r",
        {
            "pyproject.toml": PROJECT + "[tool.mypy]\n",
            "tox.ini": "[tox]\nenvlist = py,typing\n[testenv]\ndeps = -r requirements/tests.txt\n"
            "commands = pytest -v --basetemp={envtmpdir} {posargs}\n"
            "[testenv:typing]\ndeps = mypy==1.9.0\ncommands = mypy\n",
            "requirements/tests.txt": "pytest==8.1.1\n",
        },
    )
    p = plan(repo, tmp_path)
    last = words(p, 1)
    # tox's deps, pinned by the repo, installed in the workspace venv; no tox env is built.
    assert last[-4:] == ["mypy==1.9.0", "-r", "requirements/tests.txt", "ruff"]
    specs = candidates(repo, ValidationConfig(), detect_profile(repo))
    assert specs["typecheck"][0].source == "tox (typing)"
    assert specs["test"][0].command == "pytest -v --basetemp=${TMPDIR:-/tmp}/agentbot-tox"
    assert specs["test"][0].runner == "pytest"


def test_javascript_installs_frozen_from_its_lockfile(tmp_path: Path) -> None:
    scripts = {"test": "npm run unit", "unit": "vitest run", "lint": "eslint ."}
    pkg = json.dumps({"name": "x", "scripts": scripts, "devDependencies": {"prettier": "3"}})
    js = make(tmp_path / "js", {"package.json": pkg})
    p = detect_profile(js)
    assert p.name == "javascript" and p.bin_dirs == ("node_modules/.bin",)
    assert (
        p.defaults["format"].resolve(["a.ts", "b.png"]) == "prettier --check --ignore-unknown a.ts"
    )
    assert "lint" not in p.defaults and "typecheck" not in p.defaults
    specs = candidates(js, ValidationConfig(), p)
    assert specs["test"][0].command == "npm test --ignore-scripts"
    assert specs["test"][0].runner == "vitest"  # followed through `npm run unit`
    assert specs["lint"][0] == StageSpec(
        "lint", "npm run lint --ignore-scripts", "package.json", tools=("npm",)
    )
    assert plan(js, tmp_path).steps[0].command == (
        "npm install --no-audit --no-fund --no-package-lock"
    )
    (js / "package-lock.json").write_text("{}")
    assert plan(js, tmp_path).steps[0].command == "npm ci --no-audit --no-fund"
    (js / "pnpm-lock.yaml").write_text("lockfileVersion: '6.0'\n")
    pnpm = plan(js, tmp_path).steps
    assert pnpm[0].command.endswith("/pm/pnpm@8 pnpm@8")  # npm installs the lockfile's major
    assert pnpm[1].command == "pnpm install --frozen-lockfile"
    (js / "pnpm-lock.yaml").unlink()
    (js / "package-lock.json").unlink()
    (js / "yarn.lock").write_text("")
    (js / ".yarnrc.yml").write_text("")
    assert plan(js, tmp_path).steps[-1].command == "yarn install --immutable"


def test_rust_leaves_out_targets_that_need_nightly(tmp_path: Path) -> None:
    rust = make(
        tmp_path / "rs",
        {
            "Cargo.toml": '[package]\nname = "x"\nedition = "2021"\n',
            "benches/b.rs": "#![feature(test)]\n",
        },
    )
    p = detect_profile(rust)
    assert (
        p.defaults["lint"].command
        == "cargo clippy --lib --bins --tests --examples --message-format=json"
    )
    assert p.defaults["lint"].strict and "benches need nightly" in p.defaults["lint"].note
    assert p.defaults["format"].fixer(["src/a.rs"]) == "rustfmt --edition 2021 src/a.rs"
    assert plan(rust, tmp_path).steps[0].command == "cargo fetch"
    (rust / "benches/b.rs").write_text("fn main() {}\n")
    assert "--all-targets" in detect_profile(rust).defaults["typecheck"].command


def test_go_ruby_and_unknown(tmp_path: Path) -> None:
    go = detect_profile(make(tmp_path / "go", {"go.mod": "module x\n"}))
    assert go.defaults["test"].command == "go test -v ./..." and go.defaults["test"].runner == "go"
    assert go.defaults["format"].fixer(["a.go"]) == "gofmt -w a.go"
    ruby = detect_profile(make(tmp_path / "rb", {"Gemfile": "source 'x'\n"}))
    assert ruby.defaults["test"].command == "bundle exec rspec"
    unknown = detect_profile(make(tmp_path / "u", {"README.md": "hi"}))
    assert unknown.name == "unknown" and not unknown.defaults
    assert "no language profile detected" in unknown.note("test")


def test_setup_fingerprint_follows_dependency_files_and_the_plan_only(tmp_path: Path) -> None:
    repo = make(tmp_path, {"pyproject.toml": PROJECT, "src/x.py": ""})
    p = detect_profile(repo)
    first = fingerprint(repo, p, plan(repo, tmp_path))
    (repo / "src/x.py").write_text("changed = 1\n")
    assert fingerprint(repo, p, plan(repo, tmp_path)) == first
    (repo / "requirements-test.txt").write_text("pytest\n")
    assert fingerprint(repo, p, plan(repo, tmp_path)) != first


def test_stage_env_puts_the_workspace_venv_and_node_bins_first(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", {"pyproject.toml": PROJECT, "src/x/__init__.py": ""})
    base = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": "/elsewhere", "GITHUB_TOKEN": "x"}
    senv = build_stage_env(repo, detect_profile(repo), tmp_path / "data", base, use_venv=True)
    assert senv.venv is not None and senv.venv.parent == senv.packages / "venvs"
    assert senv.env["PATH"] == f"{senv.venv}/bin:/usr/bin:/bin"
    assert senv.env["VIRTUAL_ENV"] == str(senv.venv) and "GITHUB_TOKEN" not in senv.env
    assert senv.env["CI"] == "true" and senv.env["MYPY_CACHE_DIR"].startswith(str(tmp_path))
    assert "PYTHONPATH" not in senv.env
    root = build_stage_env(
        repo, detect_profile(repo), tmp_path / "data", base, use_venv=True, from_root=True
    )
    assert root.env["PYTHONPATH"] == f"{repo}/src:{repo}"  # the project is not installed
    js = make(tmp_path / "js", {"package.json": "{}"})
    jenv = build_stage_env(js, detect_profile(js), tmp_path / "data", base, use_venv=True)
    assert jenv.env["PATH"] == f"{js}/node_modules/.bin:/usr/bin:/bin"
    assert jenv.env["HUSKY"] == "0"  # husky's install must not repoint the checkout's hooks
