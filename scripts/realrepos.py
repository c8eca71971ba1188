"""Real repositories for the gate's tests: published sources from the package registries.

Each project is a real release as its registry ships it (an sdist from PyPI, a tarball
from npm, a crate from Debian's archive: trees with their tests and tool configs),
downloaded once per version into a cache CI can keep (`AGENTBOT_REALREPOS_CACHE`,
default ~/.cache/agentbot-realrepos), then turned into a git repository: the release
as the first commit, a planted bug as the base commit. Edits on top of it play the
agent: the correct fix, and fixes that add a lint error, a type error or break a test.
Nothing is vendored: the licences travel inside each downloaded release.

    python scripts/realrepos.py fetch            # download every project into the cache
    python scripts/realrepos.py prepare DEST     # and build the repositories under DEST
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

Edit = tuple[str, str, str]
"""(path, text to find, text to put instead): one exact replacement in one file."""


@dataclass(frozen=True)
class Project:
    """A release, where it comes from, and the edits the tests make to it."""

    name: str
    version: str
    registry: str  # pypi | npm | debian
    bug: Edit
    """Planted in the base commit; the correct fix undoes it."""
    lint: list[Edit]
    """On top of the fix: one new lint problem."""
    breaks: list[Edit]
    """On top of the fix: a test that passed before fails."""
    types: list[Edit] = field(default_factory=list)
    """On top of the fix: one new type error (projects with a typecheck)."""
    lockfile: str = ""
    """`npm` or `pnpm`: generate that lockfile (once, cached) and track it."""
    package: str = ""

    @property
    def archive_name(self) -> str:
        """The file the registry client saves."""
        pkg = self.package or self.name
        if self.registry == "pypi":
            return f"{pkg.replace('-', '_')}-{self.version}.tar.gz"
        if self.registry == "npm":
            return f"{pkg}-{self.version}.tgz"
        return f"{pkg}_{self.version}_amd64.deb"


PROJECTS = {
    p.name: p
    for p in [
        Project(
            name="itsdangerous",
            version="2.2.0",
            registry="pypi",
            bug=("src/itsdangerous/encoding.py", '.lstrip(b"\\x00")', '.rstrip(b"\\x00")'),
            lint=[
                ("src/itsdangerous/encoding.py", "import base64\n", "import base64\nimport os\n")
            ],
            types=[
                (
                    "src/itsdangerous/encoding.py",
                    '_int64_struct = struct.Struct(">Q")\n',
                    '_int64_struct = struct.Struct(">Q")\n_INT_SIZE: int = "8"\n',
                )
            ],
            breaks=[
                (
                    "src/itsdangerous/encoding.py",
                    "except (TypeError, ValueError) as e:",
                    "except TypeError as e:",
                )
            ],
        ),
        Project(
            name="iniconfig",
            version="2.3.1",
            registry="pypi",
            bug=(
                "src/iniconfig/_parse.py",
                "        line = line.strip()\n",
                "        line = line.lstrip()\n",
            ),
            lint=[("src/iniconfig/__init__.py", "import os\n", "import os\nimport sys\n")],
            types=[
                (
                    "src/iniconfig/__init__.py",
                    "from .exceptions import ParseError\n",
                    'from .exceptions import ParseError\n\n_LINE: int = "one"\n',
                )
            ],
            breaks=[
                (
                    "src/iniconfig/__init__.py",
                    "        return self.config.lineof(self.name, name)\n",
                    "        return None\n",
                )
            ],
        ),
        Project(
            name="cachetools",
            version="8.0.2",
            registry="pypi",
            bug=(
                "src/cachetools/__init__.py",
                "self.__currsize += diffsize",
                "self.__currsize += diffsize + 1",
            ),
            lint=[("src/cachetools/__init__.py", "import heapq\n", "import heapq\nimport os\n")],
            breaks=[
                (
                    "src/cachetools/keys.py",
                    "    return key + tuple(map(type, args))\n\n\ndef typedmethodkey",
                    "    return key\n\n\ndef typedmethodkey",
                )
            ],
        ),
        Project(
            name="minimist",
            version="1.2.8",
            registry="npm",
            bug=(
                "index.js",
                "if (typeof x === 'number') { return true; }",
                "if (typeof x === 'number') { return false; }",
            ),
            lint=[
                (
                    "index.js",
                    "function hasKey(obj, keys) {\n",
                    "function hasKey(obj, keys) {\n\tvar unused = 1;\n",
                )
            ],
            breaks=[("index.js", "(/^0x[0-9a-f]+$/i)", "(/^0x[0-9]+$/i)")],
            lockfile="npm",
        ),
        Project(
            name="is-callable",
            version="1.2.7",
            registry="npm",
            bug=(
                "index.js",
                "var constructorRegex = /^\\s*class\\b/;",
                "var constructorRegex = /^\\s*klass\\b/;",
            ),
            lint=[
                (
                    "index.js",
                    "var fnToStr = Function.prototype.toString;\n",
                    "var fnToStr = Function.prototype.toString;\nvar unused = 1;\n",
                )
            ],
            breaks=[
                (
                    "index.js",
                    "? function isCallable(value) {\n\t\tif (isDDA(value)) { return true; }\n"
                    "\t\tif (!value) { return false; }",
                    "? function isCallable(value) {\n\t\tif (isDDA(value)) { return true; }\n"
                    "\t\tif (!value) { return true; }",
                )
            ],
            lockfile="pnpm",
        ),
        Project(
            name="strsim",
            version="0.10.0-1",
            registry="debian",
            package="librust-strsim-dev",
            bug=("src/lib.rs", "count += 1", "count += 2"),
            lint=[
                (
                    "src/lib.rs",
                    "pub fn hamming(a: &str, b: &str) -> HammingResult {\n",
                    "pub fn hamming(a: &str, b: &str) -> HammingResult {\n"
                    "    if a.len() == 0 {\n"
                    "        return generic_hamming(a.chars(), b.chars());\n    }\n",
                )
            ],
            breaks=[
                (
                    "src/lib.rs",
                    "    if a_len == 0 && b_len == 0 {\n        return 1.0;",
                    "    if a_len == 0 && b_len == 0 {\n        return 0.5;",
                )
            ],
        ),
    ]
}


def cache_dir() -> Path:
    """Where downloads are kept, by version (`AGENTBOT_REALREPOS_CACHE` or ~/.cache)."""
    default = Path.home() / ".cache" / "agentbot-realrepos"
    return Path(os.environ.get("AGENTBOT_REALREPOS_CACHE", default))


def _run(argv: list[str], cwd: Path, **kw: object) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, **kw)  # type: ignore[call-overload]


def fetch(project: Project) -> Path:
    """The project's release archive, downloaded with its registry's own client once."""
    folder = cache_dir() / f"{project.name}-{project.version}"
    archive = folder / project.archive_name
    if archive.is_file():
        return archive
    if project.registry == "pypi" and (found := sorted(folder.glob(f"*{project.version}.tar.gz"))):
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    pkg = project.package or project.name
    if project.registry == "pypi":
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                str(folder),
                f"{pkg}=={project.version}",
            ],
            folder,
        )
    elif project.registry == "npm":
        _run(["npm", "pack", "--silent", f"{pkg}@{project.version}"], folder)
    else:
        try:
            _run(["apt-get", "download", f"{pkg}={project.version}"], folder)
        except subprocess.CalledProcessError:  # a fresh machine has no package lists yet
            _run(["apt-get", "update", "-qq"], folder)
            _run(["apt-get", "download", f"{pkg}={project.version}"], folder)
    if not archive.is_file():
        # An sdist named by the project's own spelling (python-dateutil-2.9.0.post0.tar.gz).
        found = sorted(folder.glob(f"*{project.version}.tar.gz"))
        if not found:
            raise FileNotFoundError(f"{project.name}: the registry gave no {archive.name}")
        return found[0]
    return archive


def _unpack(project: Project, archive: Path, dest: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if project.registry == "debian":
            _run(["dpkg-deb", "-x", str(archive), str(root)], root)
            top = next((root / "usr/share/cargo/registry").iterdir())
            (top / ".cargo-checksum.json").unlink(missing_ok=True)
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(root, filter="data")
            top = next(root.iterdir())
        shutil.copytree(top, dest, symlinks=True)


def _lockfile(project: Project, tree: Path) -> None:
    """Generate the project's lockfile once (its dependencies as resolved that day), cached."""
    name = {"npm": "package-lock.json", "pnpm": "pnpm-lock.yaml"}[project.lockfile]
    cached = cache_dir() / f"{project.name}-{project.version}" / name
    if not cached.is_file():
        if project.lockfile == "npm":
            _run(
                [
                    "npm",
                    "install",
                    "--package-lock-only",
                    "--ignore-scripts",
                    "--no-audit",
                    "--no-fund",
                ],
                tree,
            )
        else:
            _run(["npx", "--yes", "pnpm@9", "install", "--lockfile-only", "--ignore-scripts"], tree)
        shutil.copy(tree / name, cached)
    shutil.copy(cached, tree / name)


def apply(repo: Path, edits: list[Edit]) -> None:
    """Make each replacement (exactly one occurrence, or fail loudly)."""
    for rel, old, new in edits:
        path = repo / rel
        text = path.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise ValueError(f"{rel}: expected one {old!r}, found {text.count(old)}")
        path.write_text(text.replace(old, new), encoding="utf-8")


def git(repo: Path, *args: str) -> str:
    """git with a fixed identity and no hooks; stdout."""
    proc = subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            f"core.hooksPath={os.devnull}",
            *args,
        ],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip()


def prepare(project: Project, dest: Path) -> tuple[Path, str]:
    """A git repository of the release with the bug planted; (its path, the base commit)."""
    repo = dest / project.name
    if repo.exists():
        shutil.rmtree(repo)
    _unpack(project, fetch(project), repo)
    if project.lockfile:
        _lockfile(project, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{project.name} {project.version} as published")
    apply(repo, [project.bug])
    git(repo, "commit", "-q", "-am", "a bug")
    return repo, git(repo, "rev-parse", "HEAD")


def fix(project: Project, repo: Path) -> None:
    """The correct fix: undo the planted bug."""
    path, good, bad = project.bug
    apply(repo, [(path, bad, good)])


def main() -> None:
    """`fetch` the releases, or `prepare DEST` the repositories."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("fetch", "prepare"))
    parser.add_argument("dest", nargs="?", type=Path)
    parser.add_argument("--only", nargs="*", default=sorted(PROJECTS))
    args = parser.parse_args()
    for name in args.only:
        project = PROJECTS[name]
        if args.action == "fetch":
            print(f"{name} {project.version}: {fetch(project)}")
        else:
            repo, base = prepare(project, args.dest or Path.cwd())
            print(f"{name} {project.version}: {repo} (base {base[:12]})")


if __name__ == "__main__":
    main()
