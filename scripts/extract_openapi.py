"""Extract the response schemas of the GitHub endpoints agentbot calls from `@octokit/openapi`.

Usage: `python scripts/extract_openapi.py [--version 23.0.2] [--out tests/data/openapi]`

Runs `npm pack @octokit/openapi@VERSION` in a temporary directory (the npm registry is the
only network it needs), reads `generated/api.github.com.json`, and writes
`schemas.json` (one JSON Schema per endpoint and status, every `$ref` resolved inline and
OpenAPI 3.0 `nullable` turned into JSON Schema `null` types) plus the package's `LICENSE`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

DEFAULT_VERSION = "23.0.2"
DESCRIPTION = "package/generated/api.github.com.json"

# (method, path template, statuses): every call bot/github does, plus its common errors.
ENDPOINTS: list[tuple[str, str, list[str]]] = [
    ("GET", "/repos/{owner}/{repo}", ["200", "404"]),
    ("GET", "/repos/{owner}/{repo}/issues", ["200"]),
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}", ["200", "404"]),
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", ["200"]),
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", ["201", "403", "404"]),
    ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", ["200"]),
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels", ["200"]),
    ("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", ["200", "404"]),
    ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", ["200", "404"]),
    ("GET", "/repos/{owner}/{repo}/contents/{path}", ["200", "404"]),
    ("GET", "/repos/{owner}/{repo}/pulls", ["200"]),
    ("POST", "/repos/{owner}/{repo}/pulls", ["201", "422"]),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", ["200", "404"]),
    ("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}", ["200"]),
    ("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", ["201"]),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", ["200"]),
    (
        "POST",
        "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
        ["201", "404"],
    ),
    ("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", ["204"]),
    ("POST", "/repos/{owner}/{repo}/check-runs", ["201"]),
    ("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", ["200"]),
    ("GET", "/repos/{owner}/{repo}/installation", ["200", "404"]),
    ("POST", "/app/installations/{installation_id}/access_tokens", ["201", "401", "404"]),
]


def npm_pack(version: str, workdir: Path) -> Path:
    """Download the package tarball with npm and unpack it; return the unpacked root."""
    out = subprocess.run(
        ["npm", "pack", f"@octokit/openapi@{version}", "--silent"],
        cwd=workdir,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tarball = workdir / out.splitlines()[-1]
    with tarfile.open(tarball) as tar:
        tar.extractall(workdir, filter="data")
    return workdir


class Resolver:
    """Inline `$ref`s of an OpenAPI 3.0 document and translate it to JSON Schema."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.cycles: set[str] = set()

    def lookup(self, ref: str) -> Any:
        """Follow a local JSON pointer such as `#/components/schemas/issue`."""
        node: Any = self.spec
        for part in ref.removeprefix("#/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def resolve(self, node: Any, stack: tuple[str, ...] = ()) -> Any:
        """Return `node` with refs inlined; a recursive ref becomes `{}` (accept anything)."""
        if isinstance(node, list):
            return [self.resolve(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            if ref in stack:
                self.cycles.add(ref)
                return {}
            return self.resolve(self.lookup(ref), (*stack, ref))
        out = {
            key: self.resolve(value, stack)
            for key, value in node.items()
            if key not in ("example", "examples", "discriminator", "nullable")
            and not key.startswith("x-")
        }
        return nullable(out) if node.get("nullable") else out


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0 `nullable: true` as JSON Schema."""
    if isinstance(schema.get("type"), str):
        schema = {**schema, "type": [schema["type"], "null"]}
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def response_schema(resolver: Resolver, response: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON body schema of one response object, or None for an empty body."""
    if "$ref" in response:
        response = resolver.lookup(response["$ref"])
    content = response.get("content", {})
    media = content.get("application/json") or content.get("application/scim+json")
    if media is None or "schema" not in media:
        return None
    resolved: dict[str, Any] = resolver.resolve(media["schema"])
    return resolved


def extract(spec: dict[str, Any]) -> dict[str, Any]:
    """Build the `endpoints` mapping for ENDPOINTS."""
    resolver = Resolver(spec)
    endpoints: dict[str, Any] = {}
    for method, path, statuses in ENDPOINTS:
        operation = spec["paths"][path][method.lower()]
        responses: dict[str, Any] = {}
        for status in statuses:
            responses[status] = response_schema(resolver, operation["responses"][status])
        endpoints[f"{method} {path}"] = {
            "operationId": operation["operationId"],
            "responses": responses,
        }
    return {"endpoints": endpoints, "recursive_refs_cut": sorted(resolver.cycles)}


def main() -> None:
    """Download, extract, write."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION)
    parser.add_argument("--out", type=Path, default=Path("tests/data/openapi"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = npm_pack(args.version, Path(tmp))
        spec = json.loads((root / DESCRIPTION).read_text(encoding="utf-8"))
        result = {
            "source": {
                "package": "@octokit/openapi",
                "version": args.version,
                "file": DESCRIPTION.removeprefix("package/"),
                "info_version": spec["info"]["version"],
            },
            **extract(spec),
        }
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / "package" / "LICENSE", args.out / "LICENSE")
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    (args.out / "schemas.json").write_text(text, encoding="utf-8")
    print(f"wrote {args.out / 'schemas.json'} ({len(text)} bytes, {len(ENDPOINTS)} endpoints)")


if __name__ == "__main__":
    main()
