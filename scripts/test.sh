#!/usr/bin/env bash
# The test command of the README: runs the whole suite; "no tests ran" is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
# Some shells here set it and CI does not: bytecode caching changes what a rerun executes
# (a same-second edit can run stale .pyc), so every run caches as CI does.
unset PYTHONDONTWRITEBYTECODE
# In parallel by default (one worker per core), as CI runs it; `-n 0` runs it serially.
args=("$@")
case " $* " in
  *" -n "* | *" -n"[0-9a]* | *"--numprocesses"* | *"-p no:xdist"*) ;;
  *) args=(-n auto "${args[@]}") ;;
esac
python -m pytest "${args[@]}"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit "$rc"
