"""A hostile /cover writer (issue #25, item 6): a test that tells the mutated file from the
original by its bytes (a hash) "kills" every mutant; it must not be kept as a test that does.
Fake GitHub, scripted model, real pytest and git."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.e2e import world
from tests.fakes.gitrepo import read_file
from tests.test_cover_python import BASE, BRANCH, MORE, TESTS, _methods, _test, config, job, seed

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_a_test_hashing_the_source_kills_no_mutant_and_is_not_kept(tmp_path: Path) -> None:
    digest = hashlib.sha256((BASE["calc.py"] + MORE).encode()).hexdigest()
    hashing = _test(
        "test_is_even",
        "    import hashlib\n    import pathlib\n\n    is_even(4)\n"
        "    source = pathlib.Path('calc.py').read_bytes()\n"
        f"    assert hashlib.sha256(source).hexdigest() == {digest!r}\n",
    )
    methods = _methods(hashing)
    methods["is_even"] = Method(TESTS, hashing)
    _, script = team(methods)
    with world(tmp_path, script, files=BASE) as w:
        number = seed(w)
        result = cover(job(number), w.env(config()))
        tests = read_file(w.remote, BRANCH, TESTS) or ""
        comment = w.gh.comments_on("octo/calc", number)[-1].body
    items = {i["id"].split("::")[1]: i for i in result.items}
    assert not items["is_even"].get("killed"), items["is_even"]
    assert "def test_is_even(" not in tests, tests
    assert "tell the file apart" in comment or "tell the file apart" in str(items["is_even"])
