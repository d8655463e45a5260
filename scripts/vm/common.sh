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

# The Debian 6.1 kernel ABI the tier uses: the one linux-headers-amd64 points at in bookworm(-security)
# (not backports' 6.12). Cached after the first look-up so later runs need no apt metadata.
vm_kernel_abi() {
    if [ -s "$VM_CACHE/kernel-abi" ]; then cat "$VM_CACHE/kernel-abi"; return; fi
    local abi
    abi=$(apt-cache depends linux-headers-amd64 2>/dev/null |
          sed -n 's/^ *Depends: linux-headers-\(6\.1\.[0-9]*-[0-9]*\)-amd64$/\1/p' | head -n1)
    [ -n "$abi" ] || return 1
    mkdir -p "$VM_CACHE" && echo "$abi-amd64" >"$VM_CACHE/kernel-abi" && echo "$abi-amd64"
}
