#!/bin/sh
# Runs on the build host after debootstrap, with ROOTFS set; `files/` has
# already been copied over the tree. Everything here is offline.
set -eu
R=${ROOTFS:?}

echo kubelab > "$R/etc/hostname"
chroot "$R" systemctl enable systemd-networkd kubelab-seed.service
chroot "$R" systemctl mask systemd-networkd-wait-online.service

# Every guest must make its own machine-id on first boot: an empty file does
# that, but dbus's postinst wrote one that systemd would copy, giving every
# guest the same DHCP client id and so the same address.
: > "$R/etc/machine-id"
rm -f "$R/var/lib/dbus/machine-id"
ln -s /etc/machine-id "$R/var/lib/dbus/machine-id"

# Host keys made at package install would be shared by every guest; each
# machine gets its own from its seed.
rm -f "$R"/etc/ssh/ssh_host_*

# No resolver: a lab's network is isolated and has no DNS upstream.
rm -f "$R/etc/resolv.conf"
: > "$R/etc/resolv.conf"

# What debootstrap downloaded is not needed in the guest (~160 MB).
rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/*
