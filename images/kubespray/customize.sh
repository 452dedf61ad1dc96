#!/bin/sh
# After images/debian/customize.sh. kubespray's system_packages refreshes apt's lists before
# it installs (update_cache); a guest has no route, so an apt source it cannot reach would
# fail that task. With none, the refresh is empty and every package is found installed.
set -eu
R=${ROOTFS:?}
: > "$R/etc/apt/sources.list"
rm -f "$R"/etc/apt/sources.list.d/*
