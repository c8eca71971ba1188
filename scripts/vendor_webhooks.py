"""Vendor the `@octokit/webhooks-examples` payloads into tests/data/webhooks/.

Runs `npm pack` in a temporary directory (the npm registry is the only network used), reads
`api.github.com/index.json` and writes one compact JSON file per event name holding a list of
`{"action": ..., "payload": ...}` (one example per line), plus LICENSE and README.md.

    python scripts/vendor_webhooks.py [--version 7.6.1] [--out tests/data/webhooks]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

PACKAGE = "@octokit/webhooks-examples"
INDEX = "package/api.github.com/index.json"
ROOT = Path(__file__).resolve().parents[1]

# The tarball ships no licence file; its package.json says MIT and the upstream repository
# (github:octokit/webhooks) carries the MIT licence below.
MIT = """\
The MIT License

Copyright (c) Octokit contributors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
THE SOFTWARE.
"""


def npm_pack(spec: str, workdir: Path) -> tuple[Path, dict[str, Any]]:
    """Download the package tarball with npm; return its path and npm's metadata."""
    proc = subprocess.run(
        ["npm", "pack", spec, "--json", "--silent"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"npm pack {spec} failed:\n{proc.stderr.strip()}")
    meta: dict[str, Any] = json.loads(proc.stdout)[0]
    return workdir / meta["filename"], meta


def read_package(tarball: Path, workdir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Unpack the tarball; return package.json and the api.github.com event definitions."""
    with tarfile.open(tarball) as tar:
        tar.extractall(workdir, filter="data")
    package = json.loads((workdir / "package/package.json").read_text(encoding="utf-8"))
    if package.get("license") != "MIT":
        sys.exit(
            f"{PACKAGE} is no longer MIT ({package.get('license')!r}); review before vendoring"
        )
    events = json.loads((workdir / INDEX).read_text(encoding="utf-8"))
    if not isinstance(events, list) or not all("name" in e and "examples" in e for e in events):
        sys.exit(f"{INDEX}: unexpected layout (expected a list of {{name, examples}})")
    return package, events


def write_events(events: list[dict[str, Any]], out: Path) -> list[tuple[str, int, int]]:
    """Write one file per event; return (event, examples, bytes) rows."""
    for stale in out.glob("*.json"):
        stale.unlink()
    rows = []
    for event in sorted(events, key=lambda e: e["name"]):
        lines = [
            json.dumps(
                {"action": example.get("action"), "payload": example},
                separators=(",", ":"),
                ensure_ascii=False,
            )
            for example in event["examples"]
        ]
        path = out / f"{event['name']}.json"
        path.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
        rows.append((event["name"], len(lines), path.stat().st_size))
    return rows


def readme(package: dict[str, Any], meta: dict[str, Any], rows: list[tuple[str, int, int]]) -> str:
    """The README naming the package version, its checksum and what each file holds."""
    total_examples = sum(n for _, n, _ in rows)
    total_bytes = sum(b for _, _, b in rows)
    table = "\n".join(f"| `{name}.json` | {n} | {b:,} |" for name, n, b in rows)
    return f"""# Vendored webhook payloads

Real example payloads from the npm package [`{PACKAGE}`](https://www.npmjs.com/package/{PACKAGE})
version **{package["version"]}** (MIT, see LICENSE; upstream repository `{package["repository"]}`),
file `api.github.com/index.json`, tarball sha1 `{meta.get("shasum", "")}`.

Do not edit by hand: regenerate with

    python scripts/vendor_webhooks.py --version {package["version"]}

Each `<event>.json` is a JSON list of `{{"action": ..., "payload": ...}}`, one example per
line, in the package's order; `action` is null for events without one (`push`, `create`...).
All {len(rows)} event types and all {total_examples} examples are kept ({total_bytes:,} bytes).
`schedule` is an Actions-only event with no webhook and so no example here.

| file | examples | bytes |
|---|---:|---:|
{table}
"""


def main(argv: list[str] | None = None) -> int:
    """Download, unpack and write the vendored set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="", help="package version (default: latest)")
    parser.add_argument("--out", type=Path, default=ROOT / "tests/data/webhooks")
    args = parser.parse_args(argv)
    spec = f"{PACKAGE}@{args.version}" if args.version else PACKAGE
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        tarball, meta = npm_pack(spec, workdir)
        package, events = read_package(tarball, workdir)
    rows = write_events(events, args.out)
    (args.out / "LICENSE").write_text(MIT, encoding="utf-8")
    (args.out / "README.md").write_text(readme(package, meta, rows), encoding="utf-8")
    total = sum(b for _, _, b in rows)
    print(f"{PACKAGE}@{package['version']}: {len(rows)} events, {total:,} bytes -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
