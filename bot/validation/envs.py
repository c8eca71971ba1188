"""Stage commands from pre-commit, tox and nox: pinned hooks, envs' commands and their deps.

A tox env or nox session is not run through tox or nox (they would build environments of
their own, needing the network in a stage that has none): its commands run in the
workspace's environment, and its deps are installed there by the setup stage.
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

from bot.validation.sources import ENV_MANAGERS, first_word, stage_of
from bot.validation.stage import FILES, StageSpec

# --- pre-commit --------------------------------------------------------------------------------


def pre_commit(repo: Path) -> dict[str, StageSpec]:
    """`.pre-commit-config.yaml`: its pinned hooks on the changed files, as the lint stage."""
    config = repo / ".pre-commit-config.yaml"
    if not config.is_file():
        return {}
    spec = StageSpec(
        stage="lint",
        command="pre-commit run --all-files --color never",
        scoped=f"pre-commit run --color never --files {FILES}",
        fix=f"pre-commit run --color never --files {FILES}",
        source="pre-commit",
        tools=("pre-commit",),
        pre_commit=True,
    )
    return {"lint": spec}


def pre_commit_hooks(repo: Path) -> list[str]:
    """The ids of the hooks `.pre-commit-config.yaml` runs, in its order."""
    try:
        doc = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return []
    ids: list[str] = []
    for entry in (doc or {}).get("repos") or [] if isinstance(doc, dict) else []:
        for hook in (entry.get("hooks") or []) if isinstance(entry, dict) else []:
            if isinstance(hook, dict) and hook.get("id"):
                ids.append(str(hook["id"]))
    return list(dict.fromkeys(ids))


def pre_commit_pins(repo: Path) -> dict[str, str]:
    """Tool versions the pre-commit config pins (`ruff-pre-commit` rev v0.4.4 -> ruff==0.4.4)."""
    try:
        doc = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    pins: dict[str, str] = {}
    known = {"ruff-pre-commit": "ruff", "black": "black", "mirrors-mypy": "mypy",
             "flake8": "flake8", "isort": "isort", "black-pre-commit-mirror": "black"}  # fmt: skip
    for entry in (doc or {}).get("repos") or []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("repo", "")).rstrip("/").rsplit("/", 1)[-1]
        rev = str(entry.get("rev", "")).lstrip("v")
        if name in known and re.fullmatch(r"[\d.]+\w*", rev):
            pins[known[name]] = f"{known[name]}=={rev}"
    return pins


# --- tox and nox -------------------------------------------------------------------------------


def _tox_ini(repo: Path) -> configparser.ConfigParser | None:
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        if (repo / "tox.ini").is_file():
            cfg.read(repo / "tox.ini", encoding="utf-8")
            return cfg
        legacy = _toml(repo / "pyproject.toml").get("tool", {}).get("tox", {})
        if isinstance(legacy.get("legacy_tox_ini"), str):
            cfg.read_string(legacy["legacy_tox_ini"])
            return cfg
    except configparser.Error:
        return None
    return None


def tox(repo: Path) -> dict[str, StageSpec]:
    """tox envs named like a stage: their commands and deps, run in the workspace's venv."""
    found: dict[str, StageSpec] = {}
    found_envs = _tox_envs(repo)
    for name in sorted(found_envs, key=_interpreter_rank):
        commands, deps = found_envs[name]
        stage = stage_of(name, " && ".join(commands))
        if stage is None or stage in found or not commands:
            continue
        if any(first_word(c) in ENV_MANAGERS for c in commands):
            continue
        found[stage] = _env_spec(stage, f"tox ({name})", commands, deps)
    # Another tox substitution ({envsitepackagesdir}…) names tox's own env: not ours to run.
    return {k: v for k, v in found.items() if not re.search(r"(?<!\$)\{", v.command)}


def _interpreter_rank(name: str) -> tuple[int, int]:
    """0: an env for the interpreter present (py311), 1: for any, 2: for another version
    (nearest first: py310 before py37), 3: for another implementation (pypy3 on CPython)."""
    pypy = sys.implementation.name == "pypy"
    m = re.fullmatch(r"(py(?:thon)?|pypy)(\d?)\.?(\d*)", name.lower())
    if m is None:
        return (1, 0)
    if (m.group(1) == "pypy") != pypy:
        return (3, 0)
    if not m.group(3):
        return (1, 0)
    distance = abs(
        (int(m.group(2)) - sys.version_info[0]) * 100 + int(m.group(3)) - sys.version_info[1]
    )
    return (0, 0) if distance == 0 else (2, distance)


_POSARGS = re.compile(r"\{posargs(?::([^}]*))?\}|\{\[\]\}")


def _env_spec(stage: str, source: str, commands: list[str], deps: list[str]) -> StageSpec:
    """A tox env or nox session as a spec: `{posargs}` becomes the changed files for lint/format."""
    lines = [_substitute(c) for c in commands]
    text = " && ".join(lines)
    scoped = None
    if _POSARGS.search(text) and stage in ("format", "lint"):
        scoped = " ".join(_POSARGS.sub(FILES, text).split())
    whole = " ".join(_POSARGS.sub(lambda m: m.group(1) or "", text).split())
    return StageSpec(
        stage=stage,
        command=whole,
        scoped=scoped,
        source=source,
        suffixes=(".py", ".pyi") if scoped else (),
        deps=tuple(deps),
        tools=tuple(dict.fromkeys(first_word(c) for c in lines)),
        calls=tuple(lines),
        # `pre-commit run` inside an env needs the hook environments setup builds.
        pre_commit=any(first_word(c) == "pre-commit" for c in lines),
    )


def _substitute(command: str) -> str:
    """tox substitutions for the workspace venv: {envpython} is its python."""
    command = command.replace("{toxinidir}", ".").replace("{envpython}", "python")
    command = re.sub(r"\{envbindir\}/", "", command)
    return re.sub(r"\{env_?tmp_?dir\}", "${TMPDIR:-/tmp}/agentbot-tox", command)


def nox(repo: Path) -> dict[str, StageSpec]:
    """noxfile.py sessions named like a stage: their `session.run` and `session.install` args."""
    try:
        tree = ast.parse((repo / "noxfile.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, StageSpec] = {}
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not any(
            _is_session(d) for d in fn.decorator_list
        ):
            continue
        name = next((_kw_str(d, "name") for d in fn.decorator_list if _kw_str(d, "name")), fn.name)
        commands, deps = [], []
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            words = [_word(a) for a in call.args]
            if call.func.attr == "run" and words and None not in words:
                commands.append(
                    " ".join(w if w == "{posargs}" else shlex.quote(str(w)) for w in words)
                )
            elif call.func.attr == "install" and None not in words:
                deps += [str(w) for w in words if w != "{posargs}" and w != "."]
        stage = stage_of(str(name), " && ".join(commands))
        if stage is None or stage in found or not commands:
            continue
        if any(first_word(c) in ENV_MANAGERS for c in commands):
            continue
        found[stage] = _env_spec(stage, f"nox ({name})", commands, deps)
    return found


def _word(arg: ast.expr) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return "{posargs}" if isinstance(arg, ast.Starred) else None


def _is_session(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr == "session"
    return isinstance(target, ast.Name) and target.id == "session"


def _kw_str(node: ast.expr, key: str) -> str | None:
    if isinstance(node, ast.Call):
        for kw in node.keywords:
            if kw.arg == key and isinstance(kw.value, ast.Constant):
                return str(kw.value.value)
    return None


def _tox_envs(repo: Path) -> dict[str, tuple[list[str], list[str]]]:
    """env name -> (commands, deps), from tox.ini, `[tool.tox] legacy_tox_ini` or tox.toml."""
    cfg = _tox_ini(repo)
    envs: dict[str, tuple[list[str], list[str]]] = {}
    if cfg is not None:
        base = cfg["testenv"] if cfg.has_section("testenv") else {}
        envlist = _expand(
            cfg.get("tox", "envlist", fallback=cfg.get("tox", "env_list", fallback=""))
        )
        names = [s.split(":", 1)[1] for s in cfg.sections() if s.startswith("testenv:")]
        names += [n for n in envlist if n and "{" not in n and n not in names]
        for name in names:
            section = cfg[f"testenv:{name}"] if cfg.has_section(f"testenv:{name}") else {}
            commands = _lines(section.get("commands", base.get("commands", "")), commands=True)
            deps = _lines(section.get("deps", base.get("deps", "")))
            extras = _lines(section.get("extras", base.get("extras", "")).replace(",", "\n"))
            envs[name] = (commands, deps + [f".[{e}]" for e in extras])
        return envs
    # tox.toml, else tox 4's native table in pyproject.toml (pallets' `[tool.tox]`).
    doc = _toml(repo / "tox.toml") or _toml(repo / "pyproject.toml").get("tool", {}).get("tox", {})
    base = doc.get("env_run_base", {})
    for name, env in {**{n: {} for n in doc.get("env_list", [])}, **doc.get("env", {})}.items():
        raw = env.get("commands", base.get("commands", []))
        commands = [" ".join(_toml_word(w) for w in c) for c in raw if isinstance(c, list)]
        deps = [str(d) for d in env.get("deps", base.get("deps", []))]
        deps += [f".[{e}]" for e in env.get("extras", base.get("extras", []))]
        envs[str(name)] = (commands, deps)
    return envs


def _expand(envlist: str) -> list[str]:
    """tox's envlist, `py3{12,11}` written out as py312, py311."""
    names: list[str] = []
    for item in re.findall(r"[^\s,{]*(?:\{[^}]*\}[^\s,{]*)*", envlist):
        m = re.fullmatch(r"([^{]*)\{([^}]*)\}(.*)", item)
        if m is None:
            names.append(item)
            continue
        names += [f"{m.group(1)}{v.strip()}{m.group(3)}" for v in m.group(2).split(",")]
    return [n for n in names if n]


def _lines(text: str, *, commands: bool = False) -> list[str]:
    out = []
    for raw in text.replace("\\\n", " ").splitlines():
        line = raw.strip()
        if commands:  # `- cmd`: tox ignores its exit code; we run it all the same
            line = re.sub(r"^-\s*", "", line)
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _toml_word(word: object) -> str:
    """One word of a TOML tox command as shell text: `{replace = "posargs"}` is `{posargs}`,
    and a word with a tox substitution stays unquoted so the shell expands what it becomes."""
    if isinstance(word, dict):
        return "{posargs}" if word.get("replace") == "posargs" else "{unsupported}"
    text = str(word)
    return text if re.fullmatch(r"[\w@%+=:,./{}-]+", text) else shlex.quote(text)


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
