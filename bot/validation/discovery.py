"""Which command each stage runs: the repository's own first, the language default last.

For every stage the candidates are listed in the order of DESIGN §13 (agentbot.yml,
pre-commit, tox, nox, Makefile, justfile, package.json, CI workflow, default); after
setup the first one whose tools are there is used, and the ones passed over are named.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path

from bot.config import ValidationConfig
from bot.validation import envs, sources
from bot.validation.native import counted_go_test
from bot.validation.parsers import infer_runner
from bot.validation.profiles import Profile
from bot.validation.runner import first_program
from bot.validation.stage import STAGES, StageSpec

DISABLED = "disabled in config"
_SHELL = frozenset({"cd", "echo", "true", "false", "test", "[", "export", "set", "exit", ":"})


def candidates(
    repo: Path, config: ValidationConfig, profile: Profile, *, trusted: Path | None = None
) -> dict[str, list[StageSpec]]:
    """Stage -> its candidate commands, best first ([] when the stage is disabled).

    `trusted` is where the repository's own commands are read instead of `repo` (a fork's
    pull request: the base's default branch, so the fork cannot choose the gate's commands).
    """
    found: dict[str, list[StageSpec]] = {}
    named = trusted or repo
    repo_sources = [
        envs.pre_commit(named),
        envs.tox(named),
        envs.nox(named),
        sources.makefile(named),
        sources.justfile(named),
        sources.package_json(named),
        sources.ci_workflows(named),
    ]
    for stage in STAGES:
        value: str | None = getattr(config, stage)
        if value is None:
            found[stage] = []
            continue
        if value != "default":
            runner = infer_runner(value, "auto")
            value = counted_go_test(value) if runner == "go" else value
            found[stage] = [StageSpec(stage, value, "agentbot.yml", runner=runner)]
            continue
        listed = [src[stage] for src in repo_sources if stage in src]
        if stage in profile.defaults:
            listed.append(profile.defaults[stage])
        found[stage] = [_with_runner(named, s, profile) for s in listed]
    return found


def _with_runner(repo: Path, spec: StageSpec, profile: Profile) -> StageSpec:
    """Test specs get the parser their command names (npm test: the script's runner)."""
    if spec.stage != "test" or spec.runner != "auto":
        return spec
    command = spec.command
    if re.match(r"(npm|pnpm|yarn) (test|run)\b", command):
        command = script_chain(sources.package_scripts(repo), command)
    default = profile.defaults.get("test")
    runner = infer_runner(command, default.runner if default is not None else "auto")
    if runner == "go":  # plain `go test` cannot be counted (#25): made verbose
        return replace(spec, runner=runner, command=counted_go_test(spec.command))
    return replace(spec, runner=runner)


def script_chain(scripts: Mapping[str, str], command: str, depth: int = 0) -> str:
    """What `npm test` / `npm run x` runs, `npm run y` inside it followed (to find the runner)."""
    m = re.match(r"(?:npm|pnpm|yarn)(?: run| run-script)? ([\w:.-]+)", command)
    if m is None or depth > 5 or m.group(1) not in scripts:
        return command
    body = scripts[m.group(1)]
    parts = [script_chain(scripts, part.strip(), depth + 1) for part in re.split(r"&&|;", body)]
    return " && ".join(parts)


def choose(
    specs: list[StageSpec], env: Mapping[str, str], repo: Path, flags: Collection[str]
) -> tuple[StageSpec | None, list[str]]:
    """The first candidate that can run here, and why the ones before it could not."""
    passed_over: list[str] = []
    for i, spec in enumerate(specs):
        last = i == len(specs) - 1
        if spec.pre_commit and "pre-commit" not in flags:
            hooks = ", ".join(envs.pre_commit_hooks(repo)) or "none listed"
            passed_over.append(
                f"{spec.source}: hook environments could not be built in setup;"
                f" hooks that did not run: {hooks}"
            )
            if not last:
                continue
            return None, passed_over
        missing = missing_tool(spec, env, repo)
        if missing is not None and not last:
            passed_over.append(f"{spec.source}: `{missing}` not installed")
            continue
        return spec, passed_over
    return None, passed_over


def missing_tool(spec: StageSpec, env: Mapping[str, str], repo: Path) -> str | None:
    """The first tool the spec needs that is not on the stage PATH, if any."""
    tools = spec.tools or tuple(filter(None, [first_program(spec.command)]))
    path = env.get("PATH", "")
    for tool in tools:
        if not tool or tool in _SHELL or "$" in tool:
            continue
        if "/" in tool:
            if not (repo / tool).exists() and not Path(tool).exists():
                return tool
        elif shutil.which(tool, path=path) is None:
            return tool
    return None
