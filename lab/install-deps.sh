#!/usr/bin/env bash
# Install the Debian packages the lab and the tests need. Safe to re-run: it installs
# only what is missing. Says plainly what is wrong when it cannot.
set -euo pipefail

PACKAGES=(
  podman runc debootstrap uidmap slirp4netns fuse-overlayfs rsync make
  # real OpenSM and infiniband-diags on an ibsim fabric (opensm_ha scenario)
  opensm infiniband-diags ibsim-utils libumad2sim0
  # promtool (lab/test.sh rules: the alert pack and its tests) and node_exporter (the health scenario's textfiles)
  prometheus prometheus-node-exporter
)

die() { echo "install-deps: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs Debian packages and runs podman as root)."
[ -r /etc/os-release ] || die "cannot read /etc/os-release: only Debian and Ubuntu are supported."
# shellcheck disable=SC1091
. /etc/os-release
case " ${ID:-} ${ID_LIKE:-} " in
  *" debian "*|*" ubuntu "*) ;;
  *) die "this is ${PRETTY_NAME:-an unknown OS}; only Debian and Ubuntu are supported." ;;
esac
command -v apt-get >/dev/null || die "apt-get not found on a ${PRETTY_NAME:-Debian} system."

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all Debian packages present."
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq; then
  die "apt-get update failed: no network to the package mirror? (see /etc/apt/sources.list*)"
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" \
  || die "apt-get install ${missing[*]} failed (see the apt output above)."
