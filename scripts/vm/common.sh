# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# scripts/vm/common.sh — shared settings of the VM test tier, sourced by the scripts beside it.
# Every VM artefact (Debian kernel, out-of-tree modules, initramfs, ksmbd-tools, run results)
# lives under one cache folder, $VM_CACHE (default build/vm); delete it to start from nothing.

VM_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VM_CACHE=${VM_CACHE:-$VM_REPO/build/vm}
case "$VM_CACHE" in /*) ;; *) VM_CACHE=$VM_REPO/$VM_CACHE ;; esac
VM_JOBS=${VM_JOBS:-2}                # build parallelism: the machine's 2 cores are shared

vm_log() { printf '[vm %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
vm_die() { vm_log "error: $*"; exit 1; }

# apt with a wait for other users of the dpkg lock (parallel sessions install too).
vm_apt() { DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=900 "$@"; }

# Guest kernel series. 6.1 is Debian 12's own kernel; 6.12 is the newer one Debian 12 offers
# (bookworm-security) and the series of Debian 13, whose ksmbd and cifs carry two more years of
# SMB Direct fixes. Each series has its folder under the cache (vm_kernel_dir): the unpacked image
# with the built modules, vmlinux, initramfs, ABI and version. VM_KERNEL picks the one a VM boots.
VM_KERNEL_SERIES=(6.1 6.12)
VM_KERNEL=${VM_KERNEL:-6.1}
vm_kernel_dir() { echo "$VM_CACHE/kernel-${1:-$VM_KERNEL}"; }
# The series' source tarball, unpacked by install-deps from linux-source-SERIES at the image's
# version.
vm_kernel_source_tarball() { echo "$(vm_kernel_dir "$1")/source/usr/src/linux-source-$1.tar.xz"; }

# The ABI of a series' kernel (default VM_KERNEL), e.g. 6.1.0-56-amd64 or 6.12.117+deb12-amd64: the
# one its headers meta-package points at (6.1: linux-headers-amd64 in bookworm, not backports'
# 6.12; 6.12: linux-headers-6.12-amd64). Cached after the first look-up so later runs need no apt
# metadata.
vm_kernel_abi() {
    local series=${1:-$VM_KERNEL} dir abi meta pattern
    dir=$(vm_kernel_dir "$series")
    if [ -s "$dir/kernel-abi" ]; then cat "$dir/kernel-abi"; return; fi
    case "$series" in
        6.1) meta=linux-headers-amd64 pattern='6\.1\.[0-9]*-[0-9]*' ;;
        6.12) meta=linux-headers-6.12-amd64 pattern='6\.12\.[0-9]*+deb12' ;;
        *) return 1 ;;
    esac
    abi=$(apt-cache depends "$meta" 2>/dev/null |
          sed -n "s/^ *Depends: linux-headers-\($pattern\)-amd64\$/\1/p" | head -n1)
    [ -n "$abi" ] || return 1
    mkdir -p "$dir" && echo "$abi-amd64" >"$dir/kernel-abi" && echo "$abi-amd64"
}
