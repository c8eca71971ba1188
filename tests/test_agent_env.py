"""The agent works in the prepared project environment (issue #20): setup runs before the
agent, its bash has the project's dependencies and quiet defaults, and nothing it installs
reaches agentbot's own interpreter. Real parts: a local package index over HTTP, real
venvs, bubblewrap when the machine has it, fake GitHub, scripted Anthropic."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import JobStatus
from bot.sandbox import SandboxPolicy, sandbox_status
from bot.workflows.fix.story import fix_issue
from tests.e2e import world
from tests.fakes.anthropic import finish, reply, tool_use
from tests.test_fix_issue import job, seed_issue

pytestmark = pytest.mark.slow

# pytest and what it needs, repacked from this interpreter: the index serves real wheels
# without reaching PyPI.
PYTEST_DISTS = ("pytest", "iniconfig", "pluggy", "packaging", "pygments")

FILES = {
    "pyproject.toml": ('[project]\nname = "calc"\nversion = "0.1.0"\ndependencies = ["tinypkg"]\n'),
    "calc.py": "import tinypkg\n\n\ndef answer() -> int:\n    return tinypkg.ANSWER + 1\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "from calc import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"
    ),
}
FIX = {
    "command": "str_replace",
    "path": "calc.py",
    "old_str": "tinypkg.ANSWER + 1",
    "new_str": "tinypkg.ANSWER",
}
TEST_EDIT = {
    "command": "str_replace",
    "path": "tests/test_calc.py",
    "old_str": "assert answer() == 42",
    "new_str": "assert answer() == 42\n    assert isinstance(answer(), int)",
}
PROBE = "python -c \"import tinypkg; import pytest; print('deps ok', tinypkg.ANSWER)\""
SHOW_ENV = 'echo "CI=$CI NO_COLOR=$NO_COLOR TQDM=$TQDM_DISABLE PB=$PIP_PROGRESS_BAR"'


def _record(files: dict[str, bytes]) -> str:
    lines = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
    return "\n".join(lines) + "\n"


def write_wheel(folder: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    """A pure-Python wheel holding `files` (dist-info added)."""
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files = dict(files)
    files.setdefault(
        f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    )
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files.pop(f"{info}/RECORD", None)
    record = _record(files) + f"{info}/RECORD,,\n"
    path = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in files.items():
            zf.writestr(member, data)
        zf.writestr(f"{info}/RECORD", record)


def repack(folder: Path, dist_name: str) -> None:
    """A wheel of an installed distribution, from its installed files."""
    dist = importlib.metadata.distribution(dist_name)
    files: dict[str, bytes] = {}
    for item in dist.files or []:
        path = Path(str(dist.locate_file(item)))
        if "__pycache__" in item.parts or not path.is_file() or ".." in item.parts:
            continue
        files[str(item)] = path.read_bytes()
    name = dist.metadata["Name"]
    info = f"{name.replace('-', '_')}-{dist.version}.dist-info"
    # Installed dist-info folders may be named with another case; the wheel's must match.
    renamed = {}
    for member, data in files.items():
        head, _, rest = member.partition("/")
        renamed[f"{info}/{rest}" if head.endswith(".dist-info") else member] = data
    renamed.pop(f"{info}/INSTALLER", None)
    renamed.pop(f"{info}/direct_url.json", None)
    write_wheel(folder, name, dist.version, renamed)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on the test's stderr."""


@contextmanager
def package_index(tmp: Path) -> Iterator[str]:
    """A find-links page over HTTP with tinypkg, extrapkg and pytest's wheels."""
    root = tmp / "index"
    root.mkdir()
    write_wheel(root, "tinypkg", "0.1", {"tinypkg/__init__.py": b"ANSWER = 42\n"})
    write_wheel(root, "extrapkg", "0.1", {"extrapkg/__init__.py": b"X = 1\n"})
    for dist in PYTEST_DISTS:
        repack(root, dist)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def config(url: str) -> RepoConfig:
    deps = " ".join(("tinypkg", *PYTEST_DISTS))
    return RepoConfig.from_text(
        "validation:\n"
        f"  setup: python -m pip install -q --no-index --find-links {url} {deps}\n"
        "  format: null\n  lint: null\n  typecheck: null\n"
        "  test: python -m pytest -q -p no:cacheprovider\n"
        "  fix_rounds: 0\n"
    )


def agentbot_dists() -> list[str]:
    """What agentbot's own interpreter has installed, read by a fresh process."""
    code = (
        "import importlib.metadata as m, json;"
        "print(json.dumps(sorted(f'{d.metadata[\"Name\"]}=={d.version}'"
        " for d in m.distributions())))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def tool_results(request_json: dict[str, object]) -> list[str]:
    messages = request_json["messages"]
    assert isinstance(messages, list)
    last = messages[-1]["content"]
    return [str(block.get("content", "")) for block in last if block.get("type") == "tool_result"]


def script(install: str) -> list[object]:
    return [
        reply(tool_use("bash", {"command": PROBE})),
        reply(tool_use("bash", {"command": install}), tool_use("bash", {"command": SHOW_ENV})),
        reply(
            tool_use("str_replace_based_edit_tool", FIX),
            tool_use("str_replace_based_edit_tool", TEST_EDIT),
        ),
        reply(finish(summary="answer() returns tinypkg's answer", root_cause="an off-by-one")),
    ]


def run_job(tmp: Path, url: str, install: str, *, sandboxed: bool) -> tuple[object, object]:
    with world(tmp, script(install), files=FILES) as w:  # type: ignore[arg-type]
        seed_issue(w)
        env = w.env(config(url))
        if sandboxed:
            data = tmp / "data"
            policy = SandboxPolicy(root=data / "sandbox", hidden=(data,))
            with policy.open("setup") as sandbox:
                result = fix_issue(job(), replace(env, sandbox=sandbox))
        else:
            result = fix_issue(job(), env)
        return result, [r.json for r in w.llm.requests]


@pytest.mark.skipif(not sandbox_status().ok, reason=f"bubblewrap: {sandbox_status().reason}")
def test_sandboxed_agent_has_the_projects_dependencies_and_cannot_install(
    tmp_path: Path,
) -> None:
    before = agentbot_dists()
    with package_index(tmp_path) as url:
        install = (
            'pip install requests; touch "$VIRTUAL_ENV/planted";'
            ' mkdir -p "$PYTHONPYCACHEPREFIX" && touch "$PYTHONPYCACHEPREFIX/x" && echo own-ok'
        )
        result, requests = run_job(tmp_path, url, install, sandboxed=True)
    assert agentbot_dists() == before
    assert result.status == JobStatus.SUCCESS, result.error  # type: ignore[attr-defined]
    system = "".join(b["text"] for b in requests[0]["system"])  # type: ignore[index]
    assert "dependencies are installed" in system
    assert "Do not install packages into the system" in system
    assert "full test suite: `python -m pytest -q -p no:cacheprovider`" in system
    assert "one test file: `python -m pytest -q -p no:cacheprovider <path/to/test_file>`" in system
    probe = tool_results(requests[1])  # type: ignore[index]
    assert "deps ok 42" in probe[0]
    install, shown = tool_results(requests[2])  # type: ignore[index]
    assert "Successfully installed" not in install
    assert "Read-only file system" in install  # the venv validation trusts is not the agent's
    assert "own-ok" in install  # its own caches are writable
    assert "CI=true NO_COLOR=1 TQDM=1 PB=off" in shown


def test_unsandboxed_pip_lands_in_the_workspace_venv_not_agentbots(tmp_path: Path) -> None:
    before = agentbot_dists()
    with package_index(tmp_path) as url:
        install = (
            f"pip install -q --no-index --find-links {url} extrapkg && python -c 'import extrapkg'"
        )
        result, requests = run_job(tmp_path, url, install, sandboxed=False)
    assert result.status == JobStatus.SUCCESS, result.error  # type: ignore[attr-defined]
    assert "deps ok 42" in tool_results(requests[1])[0]  # type: ignore[index]
    install_out = tool_results(requests[2])[0]  # type: ignore[index]
    assert "exit code" not in install_out, install_out
    assert agentbot_dists() == before
    assert not any(d.startswith("extrapkg==") for d in before)
