#!/usr/bin/env bash
# Make bubblewrap work for agentbot's job sandbox on this runner, or say why not (DESIGN §13).
#
# GitHub-hosted Ubuntu 24.04 restricts unprivileged user namespaces through AppArmor: bwrap
# starts, then fails with "setting up uid map: Permission denied". With sudo (hosted runners
# have it) this installs bubblewrap if missing and loads an AppArmor profile that allows user
# namespaces to bwrap alone: the narrow fix, not the sysctl that lifts the restriction for
# every program. Never fails the job: without a working bwrap `agentbot run` falls back to
# the runner as the isolation boundary and says so in the step summary.
#
# AGENTBOT_APPARMOR_DIR: where the profile goes (default /etc/apparmor.d; tests point it
# elsewhere).
set -uo pipefail

say() { echo "agentbot sandbox: $*"; }
probe() {
  bwrap --unshare-user --unshare-pid --unshare-net --die-with-parent \
    --ro-bind / / --proc /proc --dev /dev true 2>&1
}

if [ "$(uname -s)" != Linux ]; then
  say "not Linux: no bubblewrap; the runner is the isolation boundary"
  exit 0
fi
as_root=""
if [ "$(id -u)" = 0 ]; then
  as_root=" "
elif sudo -n true 2>/dev/null; then
  as_root="sudo -n"
fi
run_root() { if [ "$as_root" = " " ]; then "$@"; else $as_root "$@"; fi; }

if ! command -v bwrap >/dev/null 2>&1 && [ -n "$as_root" ]; then
  export DEBIAN_FRONTEND=noninteractive
  run_root apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
    || { run_root apt-get update -qq >/dev/null 2>&1 \
      && run_root apt-get install -y -qq bubblewrap >/dev/null 2>&1; }
fi
if ! command -v bwrap >/dev/null 2>&1; then
  say "bwrap is not installed and cannot be (no sudo); the runner is the isolation boundary"
  exit 0
fi
if err=$(probe); then
  say "bubblewrap works"
  exit 0
fi
case "$err" in
  *"uid map"* | *"Permission denied"* | *"Operation not permitted"*)
    if [ -n "$as_root" ] && command -v apparmor_parser >/dev/null 2>&1; then
      dir="${AGENTBOT_APPARMOR_DIR:-/etc/apparmor.d}"
      bin=$(readlink -f "$(command -v bwrap)")
      profile="$dir/agentbot-bwrap"
      printf '%s\n' 'abi <abi/4.0>,' 'include <tunables/global>' '' \
        "profile agentbot-bwrap $bin flags=(unconfined) {" '  userns,' '}' \
        | run_root tee "$profile" >/dev/null
      if run_root apparmor_parser -r "$profile" >/dev/null 2>&1 && err=$(probe); then
        say "bubblewrap works (the AppArmor profile $profile allows its user namespaces)"
        exit 0
      fi
    fi
    ;;
esac
say "bubblewrap cannot run here (${err%%$'\n'*}); the runner is the isolation boundary"
exit 0
