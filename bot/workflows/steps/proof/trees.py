"""The proof's two checkouts, made alike: the tests must not tell the base run from the head's.

Both are git worktrees of the base commit at the same depth and under the same name
(`<data>/worktrees/<random>/<workspace name>`); the head's gets every file the change
touched, the base's only the change's test files. The judge files (`bot.judge_files`)
stay the base's in both. Both run with the same environment variables and the same
command, the runner itself on the test files; Python imports each tree's own code
(`PYTHONPATH` set alike in both to the tree's `src` and root), and where the package under
test resolves is shown in the evidence. Files a build generated in the workspace (an
ignored `_version.py`) are copied into both, so the base's package imports too.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.git import Workspace, submodules
from bot.judge_files import changed_judge, is_judge_file
from bot.validation.environment import StageEnv
from bot.validation.parsers import infer_runner

# Variables of agentbot's stage environment the repository's tests could observe and CI
# does not set (issue #25, item 9): the proof runs without them.
_HIDDEN = ("PYTHONPYCACHEPREFIX", "NO_COLOR", "FORCE_COLOR", "MYPY_CACHE_DIR", "RUFF_CACHE_DIR")
_JS = ("node", "jest", "vitest", "mocha")


@contextmanager
def tree(ws: Workspace, base_sha: str, senv: StageEnv) -> Iterator[Path | None]:
    """A worktree of the base commit shaped like every other proof tree; None if it fails."""
    path = senv.data_dir / "worktrees" / secrets.token_hex(6) / ws.path.name
    path.parent.mkdir(parents=True, exist_ok=True)
    added = ws.run(["worktree", "add", "--detach", "--quiet", str(path), base_sha], check=False)
    try:
        if added.returncode == 0:  # a worktree leaves the submodules empty: fill them alike
            submodules.fill(ws.path, path, base_sha, timeout=ws.timeout)
        yield path if added.returncode == 0 else None
    finally:
        ws.run(["worktree", "remove", "--force", "--force", str(path)], check=False)
        shutil.rmtree(path.parent, ignore_errors=True)
        ws.run(["worktree", "prune"], check=False)


def lay(ws: Workspace, dest: Path, files: list[str], deleted: list[str] | None = None) -> None:
    """Copy `files` from the workspace into `dest` (and remove `deleted` there)."""
    for rel in files:
        target = dest / rel
        if is_judge_file(rel) and not rel.endswith("conftest.py"):
            base = target.read_bytes() if target.is_file() else None
            if changed_judge({rel: (base, (ws.path / rel).read_bytes())}):
                continue  # the base's judge in both runs (a dependency added is no judge)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ws.path / rel, target)
    for rel in deleted or []:
        (dest / rel).unlink(missing_ok=True)


def generated(ws: Workspace) -> list[str]:
    """Ignored Python files inside the project's packages (a build's `_version.py`)."""
    out = ws.git("ls-files", "-z", "--others", "--ignored", "--exclude-standard")
    skip = ("__pycache__", ".venv", "node_modules", ".tox", ".nox", "build/", ".eggs", ".git/")
    return [
        p
        for p in out.split("\0")
        if p.endswith(".py") and not any(s in p for s in skip) and "/" in p
    ]


def env_for(senv: StageEnv, path: Path, runner: str) -> dict[str, str]:
    """The run's environment: built the same way for both trees."""
    env = {k: v for k, v in senv.env.items() if k not in _HIDDEN}
    if senv.profile.venv:
        env["PYTHONPATH"] = ":".join(str(path / d) for d in ("src", ".") if (path / d).is_dir())
    if runner in _JS and (senv.repo / "node_modules").is_dir():
        link = path / "node_modules"
        if not link.exists():
            link.symlink_to(senv.repo / "node_modules", target_is_directory=True)
        bin_dir = str(senv.repo / "node_modules" / ".bin")
        env["PATH"] = env["PATH"].replace(bin_dir, str(link / ".bin"))
    if runner == "cargo":
        env["CARGO_TARGET_DIR"] = str(senv.cache / "proof-target")
    return env


def runner_of(runner: str, command: str, repo: Path) -> str:
    """The runner the proof drives: `unittest` when the test command names it, the runner of
    package.json's `test` script behind `npm test` (and the like)."""
    if "unittest" in command:
        return "unittest"
    if runner == "auto" and re.search(r"\b(npm|yarn|pnpm)( run)? test\b", command):
        try:
            script = json.loads((repo / "package.json").read_text())["scripts"]["test"]
        except (OSError, ValueError, KeyError, TypeError):
            return runner
        return infer_runner(str(script), runner)
    return runner


def test_script(command: str, repo: Path) -> str:
    """The test command, followed by package.json's `test` script when it runs that script."""
    if not re.search(r"\b(npm|yarn|pnpm)( run)? test\b", command):
        return command
    try:
        return f"{command} {json.loads((repo / 'package.json').read_text())['scripts']['test']}"
    except (OSError, ValueError, KeyError, TypeError):
        return command


def python_of(command: str) -> str:
    """The interpreter a Python test command names (`/venv/bin/python3 -m pytest`), else
    `python` (the environment's: the project's venv comes first on PATH)."""
    for word in command.split():
        name = word.rsplit("/", 1)[-1]
        if re.fullmatch(r"python[\d.]*", name):
            return word
        if name in ("pytest", "py.test") and "/" in word:
            return str(Path(word).parent / "python")
    return "python"


def direct(runner: str, tests: list[str], command: str = "") -> str | None:
    """The runner itself on `tests` (never a wrapper's command chain); None: not driven."""
    quoted = " ".join(shlex.quote(t) for t in tests)
    py = shlex.quote(python_of(command))
    if runner == "pytest":
        return f"{py} -m pytest -p no:cacheprovider -rfE {quoted}"
    if runner == "unittest":
        mods = " ".join(shlex.quote(t.removesuffix(".py").replace("/", ".")) for t in tests)
        return f"{py} -m unittest -v {mods}"
    if runner == "node":
        return f"node --test {quoted}"
    if runner == "mocha":
        return f"node_modules/.bin/mocha{mocha_options(command)} {quoted}"
    if runner == "jest":
        return f"node_modules/.bin/jest {quoted}"
    if runner == "vitest":
        return f"node_modules/.bin/vitest run {quoted}"
    if runner == "cargo":
        return "cargo test --no-fail-fast"
    if runner == "go":
        dirs = sorted({"./" + str(Path(t).parent) for t in tests})
        return "go test -v " + " ".join(shlex.quote(d) for d in dirs)
    return None


_MOCHA_OPTS = re.compile(r"(?:^|\s)(--ui|-u|--require|-r)[\s=]+([\w@./:-]+)")


def mocha_options(command: str) -> str:
    """The interface and `--require` options of the repository's mocha command: a qunit or
    tdd suite does not even load under the default bdd interface."""
    return "".join(f" {opt} {shlex.quote(val)}" for opt, val in _MOCHA_OPTS.findall(command))


def module_under_test(files: list[str]) -> str:
    """The top-level Python package the change's source files belong to ("" if none)."""
    names: dict[str, int] = {}
    for f in files:
        parts = Path(f).parts
        if not f.endswith(".py") or "test" in f.lower() or parts[0] in ("docs", "scripts"):
            continue
        if parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        top = parts[0].removesuffix(".py")
        if len(parts) == 1 and top in ("setup", "noxfile", "conftest"):
            continue
        names[top] = names.get(top, 0) + 1
    return max(names, key=lambda n: names[n]) if names else ""


RESOLVE = (
    "python -c 'import importlib.util as u, sys; s = u.find_spec(sys.argv[1]);"
    ' print("agentbot-resolved:", s.origin if s else "")\' '
)


def resolved(output: str) -> str:
    """The module path a RESOLVE run printed."""
    for line in output.splitlines():
        if line.startswith("agentbot-resolved:"):
            return line.split(":", 1)[1].strip()
    return ""
