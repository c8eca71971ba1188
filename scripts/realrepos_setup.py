"""Real releases for setup: each declares its test tooling in another place (issue #24).

Like scripts/realrepos.py (whose download cache and repository building they use): a
release from PyPI as the first commit, a planted bug as the base, its fix on top. Each
one's tests need what only its own declarations bring:

- tomlkit 0.7.2: poetry, pytest and PyYAML only in `[tool.poetry.dev-dependencies]`;
- humanize 4.12.3: a tox env running `{envpython} -m pytest`, freezegun only in the env's
  `extras = tests`, envs named for interpreters (py39…py314);
- requests-mock 1.12.1: pytest, testtools and fixtures only in test-requirements.txt,
  which its tox env's deps name;
- iniconfig 2.3.1: pytest in a PEP 735 group (`[dependency-groups] dev`), uv.lock.

    python scripts/realrepos_setup.py prepare DEST
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.realrepos import PROJECTS, Project, prepare

SETUP_PROJECTS = {
    p.name: p
    for p in [
        Project(
            name="tomlkit",
            version="0.7.2",
            registry="pypi",
            bug=("tomlkit/api.py", "return data.as_string()\n", "return data.as_string()[1:]\n"),
            lint=[],
            breaks=[],
        ),
        Project(
            name="humanize",
            version="4.12.3",
            registry="pypi",
            bug=(
                "src/humanize/lists.py",
                'return f"{str(items[0])} and {str(items[1])}"',
                'return f"{str(items[0])} or {str(items[1])}"',
            ),
            lint=[],
            breaks=[],
        ),
        Project(
            name="requests-mock",
            version="1.12.1",
            registry="pypi",
            package="requests_mock",
            bug=(
                "requests_mock/response.py",
                "return super(CookieJar, self).set(name, value, **kwargs)",
                "return super(CookieJar, self).set(name, name, **kwargs)",
            ),
            lint=[],
            breaks=[],
        ),
        PROJECTS["iniconfig"],
    ]
}


def main() -> None:
    """Build every project's repository under DEST."""
    if len(sys.argv) != 3 or sys.argv[1] != "prepare":
        sys.exit("usage: python scripts/realrepos_setup.py prepare DEST")
    dest = Path(sys.argv[2])
    for project in SETUP_PROJECTS.values():
        repo, base = prepare(project, dest)
        print(f"{project.name}: {repo} (base {base[:12]})")


if __name__ == "__main__":
    main()
