"""/cover end to end on a Ruby repository with RSpec (and SimpleCov where installed)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.sandbox import SandboxPolicy, sandbox_status
from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.e2e import REPO, world
from tests.fakes.gitrepo import commits, push_files, read_file

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("rspec") is None, reason="rspec is not installed (.ci/run installs it)"
    ),
]

BRANCH = "feature/calc"
CALC = "class Calc\n  def add(a, b)\n    a + b\n  end\nend\n"
SPEC = (
    'require_relative "../lib/calc"\n\nRSpec.describe Calc do\n'
    '  it "adds" do\n    expect(Calc.new.add(1, 2)).to eq(3)\n  end\nend\n'
)
FILES = {"lib/calc.rb": CALC, "spec/calc_spec.rb": SPEC, ".rspec": "--require ./lib/calc\n"}
HEAD = """class Calc
  def add(a, b)
    a + b
  end

  def double(x)
    add(x, x)
  end

  def clamp(x, lo, hi)
    return lo if x < lo
    return hi if x > hi
    x
  end
end
"""
SPEC_FILE = "spec/calc_spec.rb"


def _spec(title: str, body: str) -> str:
    return f'\nRSpec.describe Calc do\n  it "{title}" do\n{body}  end\nend\n'


METHODS = {
    "Calc#double": Method(SPEC_FILE, _spec("doubles", "    expect(Calc.new.double(4)).to eq(8)\n")),
    "Calc#clamp": Method(
        SPEC_FILE,
        _spec(
            "clamps",
            "    expect(Calc.new.clamp(-3, 0, 9)).to eq(0)\n"
            "    expect(Calc.new.clamp(12, 0, 9)).to eq(9)\n"
            "    expect(Calc.new.clamp(9, 0, 9)).to eq(9)\n"
            "    expect(Calc.new.clamp(0, 0, 9)).to eq(0)\n",
        )
        + _spec("runs clamp", "    Calc.new.clamp(1, 0, 9)\n"),
    ),
}


@pytest.mark.parametrize("sandboxed", [False, True], ids=["direct", "bwrap"])
def test_cover_writes_rspec_examples_that_kill_mutants(tmp_path: Path, sandboxed: bool) -> None:
    if sandboxed and not sandbox_status().ok:
        pytest.skip(f"bubblewrap not usable: {sandbox_status().reason}")
    t, script = team(METHODS)
    with world(tmp_path, script, files=FILES) as w:
        push_files(w.remote, BRANCH, {"lib/calc.rb": HEAD}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        job = Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice")
        env = w.env(RepoConfig())
        if sandboxed:
            # The repository's specs, coverage and mutants run in the job's bubblewrap sandbox
            # (the data dir hidden, the workspace writable), as the doors run every job.
            data = tmp_path / "data"
            with SandboxPolicy(root=data / "sandbox", hidden=(data,)).open("setup") as box:
                result = cover(job, dataclasses.replace(env, sandbox=box))
        else:
            result = cover(job, env)
        assert result.status == JobStatus.SUCCESS, result.error

        new = commits(w.remote, BRANCH, base="main")
        assert new[0].subject == "test(lib): cover Calc#double, Calc#clamp"
        spec = read_file(w.remote, BRANCH, SPEC_FILE) or ""
        assert '"doubles"' in spec and '"clamps"' in spec and "runs clamp" not in spec
        items = {i["id"].split("::")[1]: i for i in result.items}
        assert (items["Calc#double"]["before"], items["Calc#double"]["after"]) == ("50%", "100%")
        assert items["Calc#clamp"]["after"] == "100%" and items["Calc#clamp"]["killed"] >= 3
        assert items["Calc#clamp"]["dropped"] == [f"{SPEC_FILE}::Calc runs clamp"]
        comment = w.gh.comments_on(REPO, number)[-1].body
        assert "50% → 100%" in comment and "Calc runs clamp" in comment
        assert sum(t.seen.values()) == 8
