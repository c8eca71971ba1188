#!/usr/bin/env bash
# Re-record the runner outputs in this folder from real runs (see README.md).
# Usage: tests/data/runner_outputs/record.sh [OUT_DIR]   (default: this folder)
# Needs: pytest on PATH (or $PYTEST), go, cargo, ruby-rspec, node + npm (the npm
# registry is used once to install jest, vitest and mocha into a temp dir).
set -uo pipefail
OUT="$(cd "${1:-$(dirname "$0")}" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# The same environment the validation pipeline gives every stage.
export CI=true NO_COLOR=1 FORCE_COLOR=0
MANIFEST="$OUT/manifest.tsv"
printf 'file\texit_code\tcommand\tversion\n' > "$MANIFEST"

# record NAME VERSION CMD... : run CMD in the current dir, stdout+stderr to NAME.txt
record() {
  local name="$1" version="$2"; shift 2
  "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  # Temp paths and timings differ per run; keep the text as the runner printed it.
  printf '%s.txt\t%s\t%s\t%s\n' "$name" "$rc" "$*" "$version" >> "$MANIFEST"
  echo "$name: exit $rc"
}

# --- pytest --------------------------------------------------------------------------------
PYTEST="${PYTEST:-pytest}"
PYV="$($PYTEST --version 2>&1 | head -1)"
for case in pass fail mixed none collect; do mkdir -p "$WORK/py/$case/tests"; done
cat > "$WORK/py/pass/tests/test_ok.py" <<'PY'
def test_one():
    assert 1 + 1 == 2


def test_two():
    assert "a".upper() == "A"


def test_three():
    assert [1, 2][-1] == 2
PY
cat > "$WORK/py/fail/tests/test_bad.py" <<'PY'
def test_add():
    assert 1 + 1 == 3


def test_upper():
    assert "a".upper() == "B"
PY
cat > "$WORK/py/mixed/tests/test_mixed.py" <<'PY'
import pytest


def test_ok():
    assert True


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n == 1


@pytest.mark.skip(reason="not yet")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


def test_error(broken):
    pass
PY
cat > "$WORK/py/none/tests/helpers.py" <<'PY'
VALUE = 1
PY
cat > "$WORK/py/collect/tests/test_ok.py" <<'PY'
def test_fine():
    assert True
PY
cat > "$WORK/py/collect/tests/test_broken.py" <<'PY'
import no_such_module


def test_never_runs():
    assert no_such_module
PY
for case in pass fail mixed none collect; do
  (cd "$WORK/py/$case" && record "pytest_q_$case" "$PYV" "$PYTEST" -q -p no:cacheprovider)
done
(cd "$WORK/py/mixed" && record "pytest_plain_mixed" "$PYV" "$PYTEST" -p no:cacheprovider)

# --- go test -------------------------------------------------------------------------------
if command -v go > /dev/null; then
  GOV="$(go version)"
  export GOFLAGS=-mod=mod GOCACHE="$WORK/gocache" GOPATH="$WORK/gopath"
  mkdir -p "$WORK/go/calc" "$WORK/go/util" "$WORK/go/empty"
  cd "$WORK/go" && go mod init example.com/demo > /dev/null 2>&1
  cat > calc/calc.go <<'GO'
package calc

func Add(a, b int) int { return a + b }
GO
  cat > calc/calc_test.go <<'GO'
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("bad add")
	}
}

func TestAddTable(t *testing.T) {
	for _, c := range []struct{ name string; a, b, want int }{{"small", 1, 1, 2}, {"zero", 0, 0, 0}} {
		t.Run(c.name, func(t *testing.T) {
			if Add(c.a, c.b) != c.want {
				t.Fatal("bad")
			}
		})
	}
}
GO
  cat > util/util.go <<'GO'
package util

func Double(n int) int { return n * 2 }
GO
  cat > empty/empty.go <<'GO'
package empty

const Name = "empty"
GO
  record go_v_pass "$GOV" go test -v ./...
  record go_plain_pass "$GOV" go test ./...
  cat > util/util_test.go <<'GO'
package util

import "testing"

func TestDouble(t *testing.T) {
	if Double(2) != 5 {
		t.Errorf("Double(2) = %d, want 5", Double(2))
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("not ready")
}

func TestSub(t *testing.T) {
	t.Run("good", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Fatal("boom") })
}
GO
  record go_v_mixed "$GOV" go test -v ./...
  record go_plain_mixed "$GOV" go test ./...
  rm calc/calc_test.go util/util_test.go
  record go_v_none "$GOV" go test -v ./...
  unset GOFLAGS
fi

# --- cargo test ----------------------------------------------------------------------------
if command -v cargo > /dev/null; then
  CV="$(cargo --version)"
  export CARGO_TARGET_DIR="$WORK/target"
  for case in pass mixed none; do
    mkdir -p "$WORK/rs/$case" && (cd "$WORK/rs/$case" && cargo init --lib --name "demo_$case" -q)
  done
  cat > "$WORK/rs/pass/src/lib.rs" <<'RS'
/// Adds.
///
/// ```
/// assert_eq!(demo_pass::add(1, 2), 3);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }

    #[test]
    fn adds_zero() {
        assert_eq!(add(0, 0), 0);
    }
}
RS
  mkdir -p "$WORK/rs/pass/tests" && cat > "$WORK/rs/pass/tests/api.rs" <<'RS'
#[test]
fn public_api() {
    assert_eq!(demo_pass::add(1, 1), 2);
}
RS
  cat > "$WORK/rs/mixed/src/lib.rs" <<'RS'
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }

    #[test]
    fn adds_wrong() {
        assert_eq!(add(2, 2), 5);
    }

    #[test]
    #[ignore]
    fn slow() {}

    #[test]
    fn panics() {
        panic!("boom");
    }
}
RS
  cat > "$WORK/rs/none/src/lib.rs" <<'RS'
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}
RS
  for case in pass mixed none; do
    (cd "$WORK/rs/$case" && cargo build -q --tests 2> /dev/null; record "cargo_$case" "$CV" cargo test)
  done
  unset CARGO_TARGET_DIR
fi

# --- rspec ---------------------------------------------------------------------------------
if command -v rspec > /dev/null; then
  RV="$(rspec --version | head -1)"
  for case in pass mixed none; do mkdir -p "$WORK/rb/$case/spec"; done
  cat > "$WORK/rb/pass/spec/calc_spec.rb" <<'RB'
RSpec.describe "Calc" do
  it "adds" do
    expect(1 + 1).to eq(2)
  end

  it "multiplies" do
    expect(2 * 3).to eq(6)
  end
end
RB
  cat > "$WORK/rb/mixed/spec/calc_spec.rb" <<'RB'
RSpec.describe "Calc" do
  it "adds" do
    expect(1 + 1).to eq(2)
  end

  it "subtracts" do
    expect(3 - 1).to eq(1)
  end

  it "divides" do
    expect(1 / 0).to eq(0)
  end

  it "is pending"

  xit "is skipped" do
    expect(true).to be(false)
  end
end
RB
  for case in pass mixed none; do
    (cd "$WORK/rb/$case" && record "rspec_$case" "$RV" rspec)
  done
fi

# --- JavaScript: jest, vitest, mocha, node:test ---------------------------------------------
if command -v npm > /dev/null; then
  JS="$WORK/js"
  mkdir -p "$JS" && cd "$JS"
  npm init -y > /dev/null
  npm install --no-audit --no-fund --silent jest vitest mocha > /dev/null 2>&1
  BIN="$JS/node_modules/.bin"
  NV="node $(node --version)"
  jsv() { echo "$1 $(node -p "require('$JS/node_modules/$1/package.json').version")"; }
  mk() { # mk DIR FILE: a project dir with a package.json of type commonjs and one test file
    mkdir -p "$JS/$1/test" && echo '{"name":"demo","version":"1.0.0"}' > "$JS/$1/package.json"
    cat > "$JS/$1/test/$2"
  }
  mk pass calc.test.js <<'JSX'
const assert = require("node:assert");
const add = (a, b) => a + b;
describe("calc", () => {
  it("adds", () => { assert.strictEqual(add(1, 2), 3); });
  it("adds zero", () => { assert.strictEqual(add(0, 0), 0); });
});
it("top level", () => { assert.ok(true); });
JSX
  mk mixed calc.test.js <<'JSX'
const assert = require("node:assert");
const add = (a, b) => a + b;
describe("calc", () => {
  it("adds", () => { assert.strictEqual(add(1, 2), 3); });
  it("adds wrong", () => { assert.strictEqual(add(1, 2), 4); });
  it.skip("skipped one", () => {});
});
it("throws", () => { throw new Error("boom"); });
it("top level", () => { assert.ok(true); });
JSX
  mkdir -p "$JS/none/test" && echo '{"name":"demo","version":"1.0.0"}' > "$JS/none/package.json"
  mk suite broken.test.js <<'JSX'
const missing = require("./no-such-module");
it("never runs", () => {});
JSX
  cp "$JS/pass/test/calc.test.js" "$JS/suite/test/calc.test.js"
  (cd "$JS/suite" && record jest_suite_error "$(jsv jest)" "$BIN/jest")
  for case in pass mixed none; do
    (cd "$JS/$case" && record "jest_$case" "$(jsv jest)" "$BIN/jest")
    (cd "$JS/$case" && record "mocha_$case" "$(jsv mocha)" "$BIN/mocha")
  done
  # vitest needs explicit imports (no globals) and its own file names.
  for case in pass mixed; do
    mkdir -p "$JS/v$case/test" && echo '{"name":"demo","version":"1.0.0","type":"module"}' > "$JS/v$case/package.json"
    { echo 'import { describe, it } from "vitest";'; sed 1s/.*/'import assert from "node:assert";'/ "$JS/$case/test/calc.test.js"; } > "$JS/v$case/test/calc.test.js"
    (cd "$JS/v$case" && record "vitest_$case" "$(jsv vitest)" "$BIN/vitest" run)
  done
  mkdir -p "$JS/vnone" && echo '{"name":"demo","version":"1.0.0","type":"module"}' > "$JS/vnone/package.json"
  (cd "$JS/vnone" && record vitest_none "$(jsv vitest)" "$BIN/vitest" run)
  # node:test: default reporter (tap when stdout is not a terminal, as in the pipeline) and spec.
  for case in pass mixed; do
    mkdir -p "$JS/n$case/test" && echo '{"name":"demo","version":"1.0.0"}' > "$JS/n$case/package.json"
    { echo 'const { describe, it } = require("node:test");'; cat "$JS/$case/test/calc.test.js"; } > "$JS/n$case/test/calc.test.js"
    (cd "$JS/n$case" && record "node_tap_$case" "$NV" node --test)
    (cd "$JS/n$case" && record "node_spec_$case" "$NV" node --test --test-reporter=spec)
  done
  mkdir -p "$JS/nnone" && echo '{"name":"demo","version":"1.0.0"}' > "$JS/nnone/package.json"
  (cd "$JS/nnone" && record node_tap_none "$NV" node --test)
  # Through npm, as the JS profile runs it: `npm test` with a jest script, and the npm init default.
  (cd "$JS/mixed" && npm pkg set scripts.test="$BIN/jest" && record npm_jest_mixed "npm $(npm --version)" npm test)
  (cd "$JS/none" && npm pkg set scripts.test='echo "Error: no test specified" && exit 1' && record npm_default_none "npm $(npm --version)" npm test)
fi
echo "recorded into $OUT"
