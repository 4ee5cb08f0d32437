# shellcheck shell=bash
# Stages with timings, for lab/test.sh and lab/core-matrix.sh: `stage NAME COMMAND...` runs the
# command, keeps its time and verdict in `timings` and names it in `failed` when it fails; every
# stage runs even when an earlier one failed.
declare -a timings=()
failed=()

stage() {  # stage NAME COMMAND...
  local name=$1; shift
  local start=$SECONDS
  echo "==> $name"
  if "$@"; then
    timings+=("$(printf '%-28s %5ss  ok' "$name" $((SECONDS - start)))")
  else
    timings+=("$(printf '%-28s %5ss  FAILED' "$name" $((SECONDS - start)))")
    failed+=("$name")
  fi
}
