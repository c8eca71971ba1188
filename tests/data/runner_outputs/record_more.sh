#!/usr/bin/env bash
# Re-record the node-tap, plain TAP (perl), minitest and wrapped go outputs (see README.md).
# Usage: tests/data/runner_outputs/record_more.sh [OUT_DIR]   (default: this folder)
# Needs: node + npm (the npm registry once, for tap), perl, ruby (bundled minitest), rake,
# make, go. Rows for these files are replaced in manifest.tsv; record.sh's are kept.
set -uo pipefail
OUT="$(cd "${1:-$(dirname "$0")}" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export CI=true NO_COLOR=1 FORCE_COLOR=0
MANIFEST="$OUT/manifest.tsv"

record() {
  local name="$1" version="$2"; shift 2
  "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  grep -v "^$name.txt	" "$MANIFEST" > "$MANIFEST.tmp"; mv "$MANIFEST.tmp" "$MANIFEST"
  printf '%s.txt\t%s\t%s\t%s\n' "$name" "$rc" "$*" "$version" >> "$MANIFEST"
  echo "$name: exit $rc"
}

# --- node-tap ------------------------------------------------------------------------------
mkdir -p "$WORK/tap" && cd "$WORK/tap"
npm init -y > /dev/null && npm install --no-audit --no-fund tap@21 > /dev/null 2>&1
TAPV="tap $(node_modules/.bin/tap --version)"
mkdir -p pass/test mixed/test
for case in pass mixed; do
  cp package.json "$case/" && ln -s ../node_modules "$case/node_modules"
  # full coverage of the code under test, or tap exits 1 on a passing run
  printf 'exports.add = (a, b) => a + b\n' > "$case/calc.js"
done
cat > pass/test/calc.test.js <<'JS'
const t = require('tap')
const { add } = require('../calc.js')

t.test('adds', async t => {
  t.equal(add(1, 2), 3)
})

t.test('subtracts', async t => {
  t.equal(3 - 2, 1)
})

t.test('upcases', async t => {
  t.equal('a'.toUpperCase(), 'A')
})
JS
cat > mixed/test/calc.test.js <<'JS'
const t = require('tap')
const { add } = require('../calc.js')

t.test('adds', async t => {
  t.equal(add(1, 2), 3)
})

t.test('calc', async t => {
  t.test('adds wrong', async t => {
    t.equal(add(1, 2), 4)
  })
  t.test('subtracts', async t => {
    t.equal(3 - 2, 1)
  })
})

t.test('throws', async t => {
  throw new Error('boom')
})

t.test('later', { skip: 'not yet' }, async t => {})
JS
(cd pass && record tap_pass "$TAPV" node_modules/.bin/tap)
(cd mixed && record tap_mixed "$TAPV" node_modules/.bin/tap)
(cd mixed && npm pkg set scripts.test=tap > /dev/null && record npm_tap_mixed "$TAPV" npm test)
# mocha's TAP reporter (counted by its `# tests`/`# pass` lines when read as tap)
npm install --no-audit --no-fund mocha@12 > /dev/null 2>&1
mkdir -p mocha/test && cat > mocha/test/calc.test.js <<'JS'
const assert = require('assert')
describe('calc', () => {
  it('adds', () => assert.strictEqual(1 + 2, 3))
  it('adds wrong', () => assert.strictEqual(1 + 2, 4))
  it.skip('later', () => {})
})
JS
(cd mocha && record mocha_tap_mixed "mocha $(../node_modules/.bin/mocha --version)" \
  ../node_modules/.bin/mocha --reporter tap)

# --- plain TAP: perl's Test::More, run as a script ----------------------------------------
PERLV="$(perl -MTest::More -e 'print "perl $^V, Test::More $Test::More::VERSION"')"
mkdir -p "$WORK/perl/t" && cd "$WORK/perl"
cat > t/mixed.t <<'PL'
use strict;
use warnings;
use Test::More tests => 5;

is(1 + 2, 3, 'adds');
is(1 + 2, 4, 'adds wrong');
ok('a' eq 'a', 'compares');
SKIP: {
    skip 'not yet', 1;
    ok(0, 'later');
}
is(uc 'a', 'B', 'upcases wrong');
PL
cat > t/pass.t <<'PL'
use strict;
use warnings;
use Test::More;

is(1 + 2, 3, 'adds');
is(3 - 2, 1, 'subtracts');
done_testing();
PL
cat > t/dies.t <<'PL'
use strict;
use warnings;
use Test::More;

is(1 + 2, 3, 'adds');
die "setup broke\n";
done_testing();
PL
cat > t/crash.t <<'PL'
use strict;
use warnings;
use Test::More tests => 4;

is(1 + 2, 3, 'adds');
die "crashed\n";
PL
record perl_tap_pass "$PERLV" perl t/pass.t
record perl_tap_mixed "$PERLV" perl t/mixed.t
record perl_tap_crash "$PERLV" perl t/crash.t
record perl_tap_noplan "$PERLV" perl t/dies.t

# --- minitest (ruby's bundled gem) ----------------------------------------------------------
export SEED=4242  # minitest orders tests by it: a re-record gives the same order
MTV="$(ruby -e 'require "minitest"; print "ruby #{RUBY_VERSION}, minitest #{Minitest::VERSION}"')"
for case in pass mixed none broken; do mkdir -p "$WORK/mt/$case/test"; done
cd "$WORK/mt"
cat > pass/test/test_calc.rb <<'RB'
require "minitest/autorun"

class TestCalc < Minitest::Test
  def test_adds
    assert_equal 3, 1 + 2
  end

  def test_subtracts
    assert_equal 1, 3 - 2
  end

  def test_upcases
    assert_equal "A", "a".upcase
  end
end
RB
cat > mixed/test/test_calc.rb <<'RB'
require "minitest/autorun"

class TestCalc < Minitest::Test
  def test_adds
    assert_equal 3, 1 + 2
  end

  def test_adds_wrong
    assert_equal 4, 1 + 2
  end

  def test_raises
    raise ArgumentError, "boom"
  end

  def test_later
    skip "not yet"
  end

  def test_subtracts
    assert_equal 1, 3 - 2
  end
end
RB
printf 'require "minitest/autorun"\n' > none/test/test_calc.rb
printf 'require "minitest/autorun"\nrequire_relative "../lib/missing"\n' > broken/test/test_calc.rb
cat > mixed/Rakefile <<'RB'
require "rake/testtask"

Rake::TestTask.new(:test) do |t|
  t.libs << "test"
  t.test_files = FileList["test/test_*.rb"]
end
RB
(cd pass && record minitest_pass "$MTV" ruby -Ilib -Itest test/test_calc.rb)
(cd mixed && record minitest_mixed "$MTV" ruby -Ilib -Itest test/test_calc.rb)
(cd none && record minitest_none "$MTV" ruby -Ilib -Itest test/test_calc.rb)
(cd broken && record minitest_broken "$MTV" ruby -Ilib -Itest test/test_calc.rb)
(cd mixed && record rake_minitest_mixed "$MTV, rake $(rake --version | awk '{print $3}')" rake test)

# --- go test behind make: plain, then with GOFLAGS=-v (what the gate adds) -----------------
if command -v go > /dev/null; then
  GOV="$(go version)"
  mkdir -p "$WORK/go/calc" && cd "$WORK/go" && go mod init example.com/demo > /dev/null 2>&1
  export GOCACHE="$WORK/gocache" GOPATH="$WORK/gopath"
  printf 'package calc\n\nfunc Add(a, b int) int { return a + b }\n' > calc/calc.go
  cat > calc/calc_test.go <<'GO'
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("1+2")
	}
}

func TestAddWrong(t *testing.T) {
	if Add(1, 2) != 4 {
		t.Fatal("1+2 is not 4")
	}
}

func TestTable(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(string(rune('a'+n)), func(t *testing.T) {
			if Add(n, 0) != n {
				t.Fatal(n)
			}
		})
	}
}
GO
  printf 'test:\n\tgo vet ./...\n\tgo test ./...\n' > Makefile
  record make_go_plain_mixed "$GOV, GNU Make" make test
  record make_go_flags_mixed "$GOV, GNU Make" env GOFLAGS=-v make test
  # -json (counted from its events) with a package that does not build
  mkdir -p broken
  printf 'package broken\n\nfunc X() int { return "a" }\n' > broken/b.go
  printf 'package broken\n\nimport "testing"\n\nfunc TestX(t *testing.T) {}\n' > broken/b_test.go
  record go_json_mixed "$GOV" go test -json ./...
  rm -r broken
  record go_json_pass_and_fail "$GOV" go test -json ./...
fi
