"""Language profiles detected from a repository's files, and the setup each one runs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from bot.validation import Profile, detect_profile
from bot.validation.environment import build_stage_env, setup_fingerprint


def make(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def setup_args(profile: Profile) -> list[str]:
    assert profile.setup is not None
    return shlex.split(profile.setup)


PROJECT = '[project]\nname = "x"\nversion = "1"\n'


def test_python_installs_the_project_with_its_test_extras_and_missing_tools(
    tmp_path: Path,
) -> None:
    repo = make(
        tmp_path,
        {
            "pyproject.toml": PROJECT
            + '[project.optional-dependencies]\ndev = ["ruff>=0.5"]\ntest = ["pytest-cov"]\n'
            + 'docs = ["mypy"]\n',
        },
    )
    p = detect_profile(repo)
    assert p.name == "python" and p.venv and p.parser == "pytest"
    args = setup_args(p)
    assert args[:4] == ["python", "-m", "pip", "install"]
    assert "--disable-pip-version-check" in args
    assert args[args.index("-e") + 1] == ".[test,dev]"
    # ruff is pinned by `dev`; pytest-cov is not pytest; mypy is not configured: not wanted.
    assert args[-1:] == ["pytest"]
    assert (p.format, p.lint, p.test) == (
        "ruff format --check .",
        "ruff check .",
        "pytest -q -p no:cacheprovider",
    )
    assert (p.format_fix, p.lint_fix) == ("ruff format .", "ruff check --fix .")
    assert p.typecheck is None and "mypy is not configured" in p.note("typecheck")


def test_python_requirements_files_and_dependency_groups(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        {
            "requirements.txt": "requests==2.*\n",
            "requirements-dev.txt": "pytest>=8\nmypy\n",
            "mypy.ini": "[mypy]\nstrict = True\n",
        },
    )
    p = detect_profile(repo)
    args = setup_args(p)
    assert "-e" not in args  # nothing to build: requirements only
    # no ruff configuration: ruff is neither installed nor run (it would reformat the repo)
    assert args[-4:] == ["-r", "requirements-dev.txt", "-r", "requirements.txt"]
    assert p.format is None and p.lint is None and "ruff is not configured" in p.note("lint")
    assert p.typecheck == "mypy ."
    groups = make(
        tmp_path / "g",
        {
            "pyproject.toml": PROJECT
            + '[dependency-groups]\ntest = ["pytest", "hypothesis"]\n'
            + '[tool.mypy]\nfiles = ["src"]\n',
        },
    )
    p = detect_profile(groups)
    assert setup_args(p)[-3:] == ["pytest", "hypothesis", "mypy"]
    assert p.typecheck == "mypy"  # `files` configured: no path argument


def test_python_setup_cfg_extras(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup()\n",
            "setup.cfg": "[options.extras_require]\ntesting = pytest\n[mypy]\nstrict = True\n",
            "ruff.toml": "line-length = 100\n",
        },
    )
    args = setup_args(detect_profile(repo))
    assert args[args.index("-e") + 1] == ".[testing]"
    assert args[-2:] == ["ruff", "mypy"]  # ruff.toml configures ruff: installed and run


def test_javascript_and_typescript(tmp_path: Path) -> None:
    pkg = {"name": "x", "scripts": {"test": "vitest run"}}
    js = make(tmp_path / "js", {"package.json": json.dumps(pkg)})
    p = detect_profile(js)
    assert p.name == "javascript" and p.parser == "vitest"
    assert p.setup == "npm install --no-audit --no-fund --no-package-lock"
    assert p.test == "npm test" and p.typecheck is None and p.lint is None
    assert p.format == "prettier --check ." and p.bin_dirs == ("node_modules/.bin",)
    ts = make(
        tmp_path / "ts",
        {
            "package.json": json.dumps({"name": "x", "scripts": {"test": "jest"}}),
            "package-lock.json": "{}",
            "tsconfig.json": "{}",
            "eslint.config.js": "export default [];",
        },
    )
    p = detect_profile(ts)
    assert (p.name, p.parser, p.setup) == ("typescript", "jest", "npm ci --no-audit --no-fund")
    assert (p.lint, p.lint_fix, p.typecheck) == ("eslint .", "eslint --fix .", "tsc --noEmit")
    node = make(tmp_path / "n", {"package.json": '{"scripts": {"test": "node --test"}}'})
    assert detect_profile(node).parser == "node"


def test_go_rust_ruby_and_unknown(tmp_path: Path) -> None:
    go = detect_profile(make(tmp_path / "go", {"go.mod": "module x\n"}))
    assert (go.name, go.setup, go.test) == ("go", "go mod download", "go test -v ./...")
    assert go.format is not None and go.format.startswith("gofmt -l .")
    assert (go.lint, go.typecheck, go.format_fix) == (
        "go vet ./...",
        "go build ./...",
        "gofmt -w .",
    )
    rust = detect_profile(make(tmp_path / "rs", {"Cargo.toml": "[package]\n"}))
    assert (rust.name, rust.setup, rust.format, rust.format_fix) == (
        "rust",
        None,
        "cargo fmt --check",
        "cargo fmt",
    )
    assert rust.lint is not None and rust.lint.startswith("cargo clippy")
    assert rust.test == "cargo test --no-fail-fast" and rust.parser == "cargo"
    ruby = detect_profile(make(tmp_path / "rb", {"Gemfile": "source 'x'\n"}))
    assert (ruby.setup, ruby.format, ruby.test) == (
        "bundle install",
        "bundle exec rubocop",
        "bundle exec rspec",
    )
    bare = detect_profile(make(tmp_path / "rb2", {".rspec": ""}))
    assert (bare.name, bare.setup, bare.test) == ("ruby", None, "rspec")
    unknown = detect_profile(make(tmp_path / "u", {"README.md": "hi"}))
    assert unknown.name == "unknown"
    assert all(unknown.command(s) is None for s in ("setup", "format", "lint", "typecheck", "test"))
    assert "no language profile detected" in unknown.note("test")


def test_a_tooling_package_json_does_not_hide_a_python_project(tmp_path: Path) -> None:
    repo = make(tmp_path, {"pyproject.toml": PROJECT, "package.json": "{}"})
    assert detect_profile(repo).name == "python"


def test_setup_fingerprint_follows_dependency_files_only(tmp_path: Path) -> None:
    repo = make(tmp_path, {"pyproject.toml": PROJECT, "src/x.py": ""})
    p = detect_profile(repo)
    first = setup_fingerprint(repo, p, "cmd")
    (repo / "src/x.py").write_text("changed = 1\n")
    assert setup_fingerprint(repo, p, "cmd") == first
    (repo / "requirements-test.txt").write_text("pytest\n")
    second = setup_fingerprint(repo, p, "cmd")
    assert second != first
    assert setup_fingerprint(repo, p, "other cmd") != second


def test_stage_env_puts_the_workspace_venv_and_node_bins_first(tmp_path: Path) -> None:
    repo = make(tmp_path / "r", {"pyproject.toml": PROJECT})
    base = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": "/elsewhere", "GITHUB_TOKEN": "x"}
    senv = build_stage_env(repo, detect_profile(repo), tmp_path / "data", base, use_venv=True)
    assert senv.venv is not None and senv.venv.parent == tmp_path / "data" / "venvs"
    assert senv.env["PATH"] == f"{senv.venv}/bin:/usr/bin:/bin"
    assert senv.env["VIRTUAL_ENV"] == str(senv.venv) and "GITHUB_TOKEN" not in senv.env
    assert senv.env["CI"] == "true" and senv.env["MYPY_CACHE_DIR"].startswith(str(tmp_path))
    off = build_stage_env(repo, detect_profile(repo), tmp_path / "data", base, use_venv=False)
    assert off.venv is None and off.env["PATH"] == "/usr/bin:/bin" and "VIRTUAL_ENV" not in off.env
    js = make(tmp_path / "js", {"package.json": "{}"})
    jenv = build_stage_env(js, detect_profile(js), tmp_path / "data", base, use_venv=True)
    assert jenv.env["PATH"] == f"{js}/node_modules/.bin:/usr/bin:/bin"
