"""The setup stage: install what the stages need, once per workspace and dependency files.

Callable on its own (`prepare`), so an agent can work in the environment validation
will use. Installs are frozen where the repository has a lockfile (`uv sync --frozen`,
`npm ci`, `pnpm install --frozen-lockfile`, `yarn install --immutable`); the tree guard
around the stage undoes anything setup still changed in tracked files. Setup runs again
only when the dependency files or the plan change (a marker under the data dir).
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from bot.clock import Clock
from bot.models import CommandResult, QualityGateResult
from bot.validation import env_reuse, setup_marker
from bot.validation.changes import git, is_checkout
from bot.validation.commands import called_tools
from bot.validation.environment import StageEnv, workspace_key, write_atomic
from bot.validation.installer import find_uv
from bot.validation.node import describe, node_install
from bot.validation.profiles import Profile, toml
from bot.validation.pyenv import PYTHON_TOOLS, Step, poetry_constraints, python_setup
from bot.validation.runner import clip, run_command
from bot.validation.stage import StageSpec
from bot.validation.submodule_init import SUBMODULES, submodule_init

INSTALLER_VAR = "AGENTBOT_INSTALLER"
"""In the environment given to validation: `pip` forces pip for Python setup (uv otherwise)."""


@dataclass(frozen=True)
class SetupPlan:
    """What setup will run, and what it can already tell."""

    steps: list[Step] = field(default_factory=list)
    source: str = "default"
    notes: list[str] = field(default_factory=list)
    why_none: str = ""


@dataclass(frozen=True)
class SetupOutcome:
    """The setup gate and what later stages need to know about it."""

    gate: QualityGateResult
    flags: frozenset[str] = frozenset()
    """Steps that succeeded as planned: `project` (installed), `pre-commit` (hooks ready)."""

    @property
    def from_root(self) -> bool:
        """The Python project is not installed: stages import it from the checkout."""
        return "fallback:project" in self.flags


def plan_setup(
    senv: StageEnv,
    configured: str | None,
    specs: Iterable[StageSpec],
    *,
    pre_commit: bool,
    installer: str = "",
) -> SetupPlan:
    """The setup steps for this workspace: the configured command, or the profile's own.

    Declared git submodules are initialised first, at the commits the checkout records.
    """
    plan = _plan(senv, configured, specs, pre_commit=pre_commit, installer=installer)
    if configured is None or not (senv.repo / ".gitmodules").is_file():
        return plan
    if not is_checkout(senv.repo):
        return plan
    step = Step(SUBMODULES, flag="submodules")
    return replace(plan, steps=[*plan.steps[:1], step, *plan.steps[1:]] if _venv_first(plan)
                   else [step, *plan.steps], why_none="")  # fmt: skip


def _venv_first(plan: SetupPlan) -> bool:
    return bool(plan.steps) and plan.steps[0].flag == "venv"


def _plan(
    senv: StageEnv,
    configured: str | None,
    specs: Iterable[StageSpec],
    *,
    pre_commit: bool,
    installer: str,
) -> SetupPlan:
    if configured is None:
        return SetupPlan(source="agentbot.yml", why_none="disabled in config")
    if configured != "default":
        steps = [Step(configured)]
        if senv.venv is not None:
            # A venv with pip in it: a configured command may well say `pip install …`.
            venv = shlex.quote(str(senv.venv))
            steps.insert(0, Step(f"{shlex.quote(sys.executable)} -m venv {venv}", flag="venv"))
        return SetupPlan(steps=steps, source="agentbot.yml")
    repo, profile = senv.repo, senv.profile
    if profile.venv and senv.venv is not None:
        return _python_plan(senv, list(specs), pre_commit=pre_commit, installer=installer)
    if profile.name in ("javascript", "typescript"):
        steps = [Step(c) for c in node_install(repo, senv.env, senv.packages)]
        note = describe(repo) if "--prefix" in steps[0].command else ""
        return SetupPlan(steps=steps, notes=[note] if note else [])
    if profile.name == "rust":
        # --locked only for a committed Cargo.lock (one cargo wrote earlier is ours, not theirs).
        tracked = is_checkout(repo) and git(repo, "ls-files", "Cargo.lock", check=False).strip()
        locked = " --locked" if tracked else ""
        return SetupPlan(steps=[Step(f"cargo fetch{locked}")])
    if profile.name == "go":
        return SetupPlan(steps=[Step("go mod download")])
    if profile.name == "ruby" and (repo / "Gemfile").is_file():
        return SetupPlan(steps=[Step("bundle install")])
    return SetupPlan(why_none=profile.note("setup"))


def _python_plan(
    senv: StageEnv, specs: list[StageSpec], *, pre_commit: bool, installer: str
) -> SetupPlan:
    assert senv.venv is not None
    repo = senv.repo
    pyproject = toml(repo / "pyproject.toml")
    tools: list[str] = []
    deps: list[str] = []
    for spec in specs:
        deps += spec.deps
        # What the command really calls (`python -m pytest` calls pytest), and its recipe's.
        words = [t for line in (spec.command, *spec.calls) for t in called_tools(line)]
        tools += [w for w in words if w in PYTHON_TOOLS]
    if pre_commit:
        tools.append("pre-commit")
    constraints = None
    lock = next((n for n in ("poetry.lock", "pdm.lock") if (repo / n).is_file()), None)
    if lock is not None:  # both list [[package]] name and version: pinned as constraints
        constraints = senv.data_dir / "cache" / workspace_key(repo) / "lock-constraints.txt"
        write_atomic(constraints, poetry_constraints(repo, lock))
    uv = find_uv(senv.env, installer)
    plan = python_setup(
        repo,
        pyproject,
        venv=senv.venv,
        python=sys.executable,
        uv=uv,
        tools=tools,
        extra_requirements=deps,
        constraints=constraints,
        pre_commit=pre_commit,
    )
    notes = ([] if uv else ["uv not found: installing with pip"]) + plan.notes()
    return SetupPlan(steps=plan.steps, notes=notes)


def fingerprint(repo: Path, profile: Profile, plan: SetupPlan, senv: StageEnv | None = None) -> str:
    """A hash of the plan and the dependency files it installs from (with `senv`: the same
    for every workspace of the repository, its own paths left out)."""
    h = hashlib.sha256(profile.name.encode() + b"\0")
    for step in plan.steps:
        text = f"{step.command}\0{step.fallback}\0"
        h.update((env_reuse.portable(text, senv) if senv is not None else text).encode())
    patterns = (*profile.lockfiles, ".gitmodules")
    files = sorted({p for pattern in patterns for p in repo.glob(pattern) if p.is_file()})
    if (repo / ".gitmodules").is_file() and is_checkout(repo):
        # The commits the checkout records for its submodules (gitlinks): a new one sets up again.
        staged = git(repo, "ls-files", "--stage", check=False).splitlines()
        h.update("\n".join(ln for ln in staged if ln.startswith("160000 ")).encode())
    for path in files:
        h.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def run_setup(senv: StageEnv, plan: SetupPlan, *, timeout: float, clock: Clock) -> SetupOutcome:
    """Run the plan unless this workspace is already set up for its dependency files."""
    command = _display(" && ".join(s.command for s in plan.steps), senv)
    if not plan.steps:
        gate = QualityGateResult(
            gate_name="setup", status="skipped", warning=plan.why_none, source=plan.source
        )
        return SetupOutcome(gate=gate)
    marker = senv.data_dir / "setup" / f"{workspace_key(senv.repo)}.json"
    stamp = fingerprint(senv.repo, senv.profile, plan, senv)
    cached = setup_marker.read(marker)
    earlier = cached is None or cached.clone != setup_marker.clone_id(senv.repo)
    if earlier and senv.venv is not None and senv.venv.exists():
        # An earlier clone's venv at this workspace path: its stages could write there.
        shutil.rmtree(senv.venv)
    venv_ok = senv.venv is None or (senv.venv / "bin" / "python").exists()
    retry = cached is not None and setup_marker.UNREACHABLE in cached.flags  # an outage then
    if venv_ok and cached is not None and cached.fingerprint == stamp and not retry:
        return _skipped(
            "already set up for these dependency files (cached)", cached.flags, cached.warnings,
            command=command, source=plan.source,
        )  # fmt: skip
    reused = None if venv_ok else env_reuse.restore(senv, stamp)
    if reused is not None:
        setup_marker.write(marker, senv, stamp, command, reused.flags, reused.warnings)
        return _skipped(
            "the environment an earlier job set up for these dependency files, copied (cached)",
            reused.flags, reused.warnings, command=command, source=plan.source,
        )  # fmt: skip
    if senv.venv is not None:
        senv.venv.parent.mkdir(parents=True, exist_ok=True)
    results: list[CommandResult] = []
    flags: set[str] = set()
    warnings = list(plan.notes)
    failed = timed_out = False
    for step in plan.steps:
        if step.flag == "venv" and venv_ok:
            continue
        if step.flag == "submodules":  # the bot's own git: `.git` is read-only in the sandbox
            result = submodule_init(senv.repo, timeout=timeout)
        else:
            result = _run(senv, step.command, timeout=timeout, clock=clock)
        results.append(result)
        if not result.success and step.fallback is not None and not result.timed_out:
            unreachable = setup_marker.unreachable(result.output)
            result = _run(senv, step.fallback, timeout=timeout, clock=clock)
            results.append(result)
            if result.success:
                warnings.append(step.warning)
                flags.add(f"fallback:{step.flag}")
                if unreachable:  # an outage, not the project: the next run tries again
                    warnings.append(f"a package host was unreachable: {step.flag} is tried again")
                    flags.add(setup_marker.UNREACHABLE)
                continue
        if result.success:
            flags.add(step.flag)
        elif step.optional:
            warnings.append(f"{step.warning}: {_last_line(result.output)}")
        else:
            failed, timed_out = True, result.timed_out
            break
    flags.discard("")
    if not failed:
        setup_marker.write(marker, senv, stamp, command, sorted(flags), warnings)
        # Made from scratch, only setup ran in it; after an outage the next run sets up again.
        if not venv_ok and setup_marker.UNREACHABLE not in flags:
            env_reuse.keep(senv, stamp, sorted(flags), warnings)
    status = "timed_out" if timed_out else "failed" if failed else "passed"
    output = "\n".join(f"$ {shlex.join(r.command[2:])}\n{r.output}" for r in results)
    merged = CommandResult(
        command=["/bin/sh", "-c", command],
        exit_code=results[-1].exit_code,
        output=clip(output),
        success=not failed,
        duration_seconds=round(sum(r.duration_seconds for r in results), 3),
        timed_out=timed_out,
    )
    gate = QualityGateResult(
        gate_name="setup", status=status, command_result=merged, command=command,
        source=plan.source, warning="; ".join(w for w in warnings if w),
    )  # fmt: skip
    return SetupOutcome(gate=gate, flags=frozenset(flags))


def _skipped(
    why: str, flags: list[str], warnings: list[str], *, command: str, source: str
) -> SetupOutcome:
    """Setup not run again: this workspace (or a copy of an earlier one) is set up already."""
    gate = QualityGateResult(
        gate_name="setup", status="skipped", warning="; ".join([why, *warnings]),
        command=command, source=source,
    )  # fmt: skip
    return SetupOutcome(gate=gate, flags=frozenset(flags))


def _run(senv: StageEnv, command: str, *, timeout: float, clock: Clock) -> CommandResult:
    """One setup command, in the sandbox with the network setup (alone) gets."""
    return run_command(
        command, senv.repo, env=senv.env, timeout=timeout, clock=clock,
        sandbox=senv.sandbox, writable=senv.setup_writable, setup=True,
    )  # fmt: skip


def _display(command: str, senv: StageEnv) -> str:
    """The setup command for people: the venv, agentbot's interpreter and uv by short names."""
    if senv.venv is not None:
        command = command.replace(shlex.quote(str(senv.venv)), "$VENV").replace(
            str(senv.venv), "$VENV"
        )
    command = command.replace(str(senv.packages), "$PACKAGES").replace(str(senv.cache), "$CACHE")
    uv = find_uv({"PATH": ""})
    for path, name in ((uv, "uv"), (sys.executable, "python")):
        if path:
            command = command.replace(shlex.quote(path), name).replace(path, name)
    return command


def _last_line(output: str) -> str:
    # pre-commit ends with "Check the log at <runner's home>/…": a local path, nobody's help.
    lines = [
        ln.strip() for ln in output.splitlines() if ln.strip() and "Check the log at" not in ln
    ]
    return lines[-1][:200] if lines else "no output"
