"""A fresh project for `agentbot tdd` in an empty directory: sources, tests and a test runner.

Each skeleton is the smallest project its language's usual tools accept: the package the
kata's code goes into (named after the kata), an empty tests folder and the runner
configured (pytest, node:test, cargo test, go test), so the first cycle's test has a home
and `agentbot validate` finds the commands it needs.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot import treefs

LANGUAGES = ("python", "js", "ts", "rust", "go")


def package_name(title: str) -> str:
    """`Roman Numerals` -> `roman_numerals` (a valid identifier in every language here)."""
    name = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") or "kata"
    return name if not name[0].isdigit() else f"kata_{name}"


def skeleton_files(language: str, title: str) -> dict[str, str]:
    """Path -> text of the skeleton for `language`; ValueError for one not in LANGUAGES."""
    pkg = package_name(title)
    dashed = pkg.replace("_", "-")
    if language == "python":
        return {
            "pyproject.toml": (
                f'[project]\nname = "{dashed}"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n\n'
                '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n\n'
                '[tool.ruff]\nline-length = 100\n\n[tool.ruff.format]\nquote-style = "double"\n\n'
                "[tool.mypy]\nstrict = true\n"
            ),
            f"{pkg}/__init__.py": f'"""{title}."""\n',
            "tests/__init__.py": "",
            ".gitignore": "__pycache__/\n.venv/\n.pytest_cache/\n",
        }
    if language in ("js", "ts"):
        ext = "ts" if language == "ts" else "js"
        test = "node --test" if ext == "js" else "node --experimental-strip-types --test"
        return {
            "package.json": (
                f'{{\n  "name": "{dashed}",\n  "version": "0.1.0",\n  "private": true,\n'
                f'  "scripts": {{\n    "test": "{test}"\n  }}\n}}\n'
            ),
            f"src/{pkg}.{ext}": f"// {title}.\nmodule.exports = {{}};\n",
            "test/.gitkeep": "",
            ".gitignore": "node_modules/\n",
        }
    if language == "rust":
        return {
            "Cargo.toml": f'[package]\nname = "{dashed}"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": f"//! {title}.\n",
            ".gitignore": "target/\n",
        }
    if language == "go":
        return {
            "go.mod": f"module example.com/{pkg}\n\ngo 1.21\n",
            f"{pkg}.go": f"// Package {pkg}: {title}.\npackage {pkg}\n",
        }
    raise ValueError(f"unknown language {language!r}; one of {', '.join(LANGUAGES)}")


def write_skeleton(root: Path, language: str, title: str) -> list[str]:
    """Write the skeleton into `root` (nothing is overwritten); the paths written."""
    written = []
    for rel, text in skeleton_files(language, title).items():
        if treefs.kind(root, rel) != "missing":
            continue
        treefs.write_bytes(root, rel, text.encode())  # never through a link the repo holds
        written.append(rel)
    return written


_BARE = re.compile(r"^(?:\.git|\.github|\.gitignore|\.gitattributes|README.*|LICEN[CS]E.*)$", re.I)


def is_empty(root: Path) -> bool:
    """True when `root` has no project yet: nothing but git files, a README or a licence."""
    return not any(not _BARE.match(p.name) for p in root.iterdir()) if root.is_dir() else True


def detect_language(root: Path) -> str:
    """The language of an existing project by its manifest ("python" when none says)."""
    if (root / "package.json").is_file():
        return "ts" if (root / "tsconfig.json").is_file() else "js"
    if (root / "Cargo.toml").is_file():
        return "rust"
    if (root / "go.mod").is_file():
        return "go"
    return "python"


def project_modules(root: Path, language: str) -> set[str]:
    """Names a test may import as the code under test (the top-level packages and modules)."""
    if language == "rust":
        found = re.search(r'^name\s*=\s*"([^"]+)"', _text(root / "Cargo.toml"), re.M)
        return {found[1].replace("-", "_")} if found else set()
    if language != "python":
        return {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")}
    names: set[str] = set()
    for base in (root, root / "src"):
        if not base.is_dir():
            continue
        for p in base.iterdir():
            if p.name.startswith((".", "_")) or p.name in ("tests", "test"):
                continue
            if p.suffix == ".py":
                names.add(p.stem)
            elif p.is_dir() and (p / "__init__.py").is_file():
                names.add(p.name)
    found = re.search(r'^name\s*=\s*"([^"]+)"', _text(root / "pyproject.toml"), re.M)
    if found:
        names.add(re.sub(r"[-.]+", "_", found[1]).lower())
    return names


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""
