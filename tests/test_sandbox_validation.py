"""Validation in the job's sandbox: setup installs from a package index (network on), the
other stages reach nothing (network off), as `sandbox.network` says."""

from __future__ import annotations

import base64
import hashlib
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.models import ValidationReport
from bot.sandbox import SandboxPolicy, sandbox_status
from bot.validation import run_validation
from tests.fakes.gitrepo import git

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sandbox_status().ok, reason=f"bubblewrap: {sandbox_status().reason}"),
]


def wheel(folder: Path) -> Path:
    """A real, minimal wheel of `tinypkg` 0.1 (a package index's only file)."""
    files = {
        "tinypkg/__init__.py": b"ANSWER = 42\n",
        "tinypkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
        "tinypkg-0.1.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("tinypkg-0.1.dist-info/RECORD,,")
    path = folder / "tinypkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("tinypkg-0.1.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@contextmanager
def package_index(tmp: Path) -> Iterator[str]:
    """A local HTTP server holding the wheel: the 'package index' setup may reach."""
    root = tmp / "index"
    root.mkdir()
    wheel(root)
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def validate(tmp: Path, network: str, url: str) -> ValidationReport:
    repo = tmp / f"repo-{network}"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1"\n')
    (repo / "tests").mkdir()
    (repo / "tests" / "test_tiny.py").write_text(
        "import unittest\n\nimport tinypkg\n\n\nclass T(unittest.TestCase):\n"
        "    def test_answer(self) -> None:\n        self.assertEqual(tinypkg.ANSWER, 42)\n"
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    fetch = f"import urllib.request; urllib.request.urlopen('{url}', timeout=5); print('reached')"
    config = ValidationConfig(
        setup=f"python -m pip install -q --no-index --find-links {url} tinypkg",
        format=None,
        lint=f'python -c "{fetch}"',
        typecheck=None,
        test="python -m unittest discover -s tests",  # a counted run that imports tinypkg
    )
    data = tmp / f"data-{network}"
    policy = SandboxPolicy(root=data / "sandbox", hidden=(data,))
    with policy.open(network) as sandbox:  # type: ignore[arg-type]
        return run_validation(repo, config, data_dir=data, sandbox=sandbox)


def status(report: ValidationReport, stage: str) -> str:
    return next(g.status for g in report.gates if g.gate_name == stage)


def test_setup_installs_from_the_index_while_other_stages_have_no_network(
    tmp_path: Path,
) -> None:
    with package_index(tmp_path) as url:
        report = validate(tmp_path, "setup", url)
    assert status(report, "setup") == "passed"
    assert status(report, "test") == "passed"  # tinypkg really is in the workspace's venv
    lint = next(g for g in report.gates if g.gate_name == "lint")
    assert lint.status == "failed" and lint.command_result is not None
    assert "reached" not in lint.command_result.output
    assert "Connection refused" in lint.command_result.output or "Errno" in (
        lint.command_result.output
    )


def test_network_none_leaves_setup_offline_too(tmp_path: Path) -> None:
    with package_index(tmp_path) as url:
        report = validate(tmp_path, "none", url)
    assert status(report, "setup") == "failed"
