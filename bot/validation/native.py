"""Language profiles of compiled and Ruby repositories: go, rust, ruby (pure reads)."""

from __future__ import annotations

import re
from pathlib import Path

from bot.validation.profiles import Profile, toml
from bot.validation.profiles import spec as _spec
from bot.validation.stage import FILES


def go_profile() -> Profile:
    # gofmt -l exits 0 even when it lists files: any output (files or errors) fails.
    listing = " 2>&1 | awk '{print} END {exit (NR > 0)}'"
    return Profile(
        name="go",
        defaults={
            "format": _spec("format", f"gofmt -l .{listing}", scoped=f"gofmt -l {FILES}{listing}",
                            fix=f"gofmt -w {FILES}", suffixes=(".go",), tools=("gofmt",)),
            "lint": _spec("lint", "go vet ./..."),
            "typecheck": _spec("typecheck", "go build ./..."),
            # -v prints a line per test, so passes are counted too.
            "test": _spec("test", "go test -v ./...", runner="go"),
        },
        lockfiles=("go.mod", "go.sum"),
    )  # fmt: skip


def rust_targets(repo: Path) -> tuple[str, str]:
    """The cargo target flags that build on stable, and why some were left out."""
    nightly = {
        kind for kind in ("benches", "examples", "tests")
        if any("#![feature" in p.read_text(errors="replace") for p in (repo / kind).rglob("*.rs"))
    }  # fmt: skip
    if not nightly:
        return "--all-targets", ""
    flags = ["--lib", "--bins"] + [f"--{k}" for k in ("tests", "examples") if k not in nightly]
    return " ".join(flags), f"{', '.join(sorted(nightly))} need nightly features: left out"


def rust_profile(repo: Path) -> Profile:
    targets, why = rust_targets(repo)
    edition = str(toml(repo / "Cargo.toml").get("package", {}).get("edition", "2015"))
    rustfmt = f"rustfmt --edition {edition}"
    return Profile(
        name="rust",
        defaults={
            "format": _spec("format", "cargo fmt --check", scoped=f"{rustfmt} --check {FILES}",
                            fix=f"{rustfmt} {FILES}", suffixes=(".rs",), tools=("cargo",)),
            # Without -D warnings every target is linted; the baseline decides what is new.
            "lint": _spec("lint", f"cargo clippy {targets} --message-format=json", strict=True,
                          tools=("cargo-clippy",), note=why),
            "typecheck": _spec("typecheck", f"cargo check {targets} --message-format=short",
                               note=why),
            # Every test binary runs even if one fails, so all failures are known (baseline).
            "test": _spec("test", "cargo test --no-fail-fast", runner="cargo"),
        },
        lockfiles=("Cargo.toml", "Cargo.lock"),
    )  # fmt: skip


def ruby_profile(repo: Path) -> Profile:
    run = "bundle exec " if (repo / "Gemfile").is_file() else ""
    rakefile = next((repo / n for n in ("Rakefile", "rakefile", "Rakefile.rb")
                     if (repo / n).is_file()), None)  # fmt: skip
    rake = rakefile.read_text(errors="replace") if rakefile else ""
    rspec = (repo / ".rspec").is_file() or (repo / "spec").is_dir()
    # minitest through the Rakefile's test task, as the gem's own CI runs it.
    minitest = re.search(r"Rake::TestTask|Minitest::TestTask|task\s*\(?\s*:test\b", rake)
    test = (
        _spec("test", f"{run}rake test", runner="minitest")
        if minitest and not rspec
        else _spec("test", f"{run}rspec", runner="rspec")
    )
    return Profile(
        name="ruby",
        defaults={
            "format": _spec("format", f"{run}rubocop", fix=None),
            "test": test,
        },
        notes={"lint": "rubocop runs in the format stage", "typecheck": "Ruby has no typecheck"},
        lockfiles=("Gemfile", "Gemfile.lock", "*.gemspec", "Rakefile"),
    )


_GO_TEST = re.compile(r"\bgo\s+test\b")


def counted_go_test(command: str) -> str:
    """A go test command that prints a line per test, so its passes can be counted.

    Plain `go test` prints only `ok pkg 0.01s` per package: the pass count is unknown and
    the stage would be unverified. `-v` is added rather than `-json`: its `--- PASS` lines
    are what parsers.parse_go counts, and the output stays readable for the repair agent.
    A wrapper (`make test`) gets `GOFLAGS=-v`, which reaches the go test it runs inside;
    a command that already says -v or -json (whose events are counted) is left alone.
    """
    if "GOFLAGS" in command:
        return command
    if _GO_TEST.search(command):
        parts = re.split(r"(&&|\|\||;|\|)", command)
        return "".join(_verbose(p) if _GO_TEST.search(p) else p for p in parts)
    return f'GOFLAGS="${{GOFLAGS:-}} -v" {command}'


def _verbose(part: str) -> str:
    if re.search(r"\s-(?:v|json)(?:[\s=]|$)", part):
        return part
    return _GO_TEST.sub(lambda m: f"{m.group(0)} -v", part)
