#!/usr/bin/env bash
# Build the node image (Debian bookworm, systemd as PID 1) with debootstrap and
# `podman import`: no container registry can be reached. The image is tagged with a key
# derived from this recipe, so a second run reuses it. Prints the image name.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"

SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
INCLUDE=python3,systemd,systemd-sysv,dbus,iproute2,kmod,pciutils,procps,udev,sudo

key=$(printf '%s\n' "$SUITE" "$INCLUDE" "$(sed -n '/^# recipe-start/,/^# recipe-end/p' "$0")" | sha256sum | cut -c1-12)
image="localhost/rdma-fabric-node:$key"

if podman image exists "$image"; then
  echo "image: reusing cached $image" >&2
  echo "$image"
  exit 0
fi

command -v debootstrap >/dev/null || { echo "image: debootstrap missing: run lab/install-deps.sh" >&2; exit 1; }
rootfs=$(mktemp -d /var/tmp/rdma-fabric-rootfs.XXXXXX)
trap 'umount "$rootfs/proc" 2>/dev/null || true; rm -rf --one-file-system "$rootfs"' EXIT
echo "image: debootstrap $SUITE into $rootfs (a few minutes)" >&2
debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 \
  || { tail -20 "$rootfs.log" >&2; echo "image: debootstrap failed (log above)" >&2; exit 1; }
rm -f "$rootfs.log"

# recipe-start: changes here change the image key
# Units that make no sense in a container and slow or break boot.
for unit in systemd-udev-trigger.service systemd-udevd.service systemd-networkd-wait-online.service \
            getty@tty1.service console-getty.service systemd-logind.service systemd-remount-fs.service \
            systemd-firstboot.service apt-daily.timer apt-daily-upgrade.timer; do
  ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"
done
# mktemp made the root 0700: / must be traversable by the service users (munge, slurm)
chmod 0755 "$rootfs"
# Slurm 22.05 and munge from Debian (the scheduler gate, docs/scheduler.md): slurmctld, slurmd and
# slurm-client, dependencies only. Nothing starts in the chroot (policy-rc.d); slurmctld and slurmd
# stay disabled (lab.sh starts slurmctld on the lab's controller and slurmd on the GPU nodes), munge
# runs everywhere with the one key this recipe made (/etc/munge/munge.key, 0400, munge): the lab's
# nodes share it as a cluster's do.
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
mount -t proc proc "$rootfs/proc"
chroot "$rootfs" sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
  --no-install-recommends slurmctld slurmd slurm-client munge' >"$rootfs.apt.log" 2>&1 \
  || { umount "$rootfs/proc"; tail -20 "$rootfs.apt.log" >&2; echo "image: the Slurm packages did not install" >&2; exit 1; }
umount "$rootfs/proc"
rm -f "$rootfs.apt.log" "$rootfs/usr/sbin/policy-rc.d" "$rootfs/etc/resolv.conf"
chroot "$rootfs" systemctl disable --quiet slurmctld.service slurmd.service
[ -s "$rootfs/etc/munge/munge.key" ] || chroot "$rootfs" mungekey --create --keyfile=/etc/munge/munge.key
chroot "$rootfs" sh -c 'chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key'
echo "rdma-node" >"$rootfs/etc/hostname"
: >"$rootfs/etc/machine-id"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
# recipe-end

echo "image: importing as $image" >&2
tar -C "$rootfs" -c . | podman import \
  --change 'CMD ["/sbin/init"]' --change 'ENV container=podman' --change 'STOPSIGNAL SIGRTMIN+3' \
  - "$image" >/dev/null
podman tag "$image" localhost/rdma-fabric-node:latest
echo "$image"
