#!/usr/bin/env bash
# pmem-setup.sh -- inside the VM: persistent memory and a disk as an
# application would find them. The VM has two emulated NVDIMMs (QEMU
# nvdimm devices, each backed by a file of the host) and a virtio disk
# (host caching off); this makes
#   the first NVDIMM a device DAX:            DEVDAX=/dev/daxN.M
#   the second an fsdax block device with an
#     ext4 mounted -o dax:                    FSDAX_DIR=/mnt/rxe-fsdax
#   the disk an ext4 (page cache, no DAX):    DISK_DIR=/mnt/rxe-disk
# and prints those assignments (for eval), with DEVDAX_OFFSET: where the
# device's data starts in its NVDIMM's backing file (the host reads it
# there after a power cut). Needs the modules nfit, nd_pmem, dax_pmem,
# device_dax and virtio_blk (run-vm-tests.sh has the VM load them).
#
# usage: pmem-setup.sh [NO_DISK]
set -euo pipefail

say() { echo "pmem-setup: $*" >&2; }

regions=()
for r in /sys/bus/nd/devices/region*; do
	[ -e "$r/nstype" ] || [ -e "$r/size" ] || continue
	regions+=("$(basename "$r")")
done
[ ${#regions[@]} -ge 2 ] || { say "want two NVDIMM regions, found ${#regions[@]}"; exit 1; }
# in NVDIMM order: region numbers follow the devices
mapfile -t regions < <(printf '%s\n' "${regions[@]}" | sort -V)

# the namespace of a region, made anew in the given mode
namespace() { # namespace REGION MODE
	local ns
	ns=$(ndctl list -r "$1" -N -i 2>/dev/null | sed -n 's/.*"dev":"\(namespace[0-9.]*\)".*/\1/p' | head -n 1)
	[ -n "$ns" ] || { say "no namespace in $1"; exit 1; }
	ndctl create-namespace -f -e "$ns" -m "$2" >/dev/null ||
		{ say "ndctl create-namespace -e $ns -m $2 failed"; exit 1; }
	echo "$ns"
}

ns=$(namespace "${regions[0]}" devdax)
dax=$(basename "$(ls -d /sys/bus/nd/devices/"$ns"/../dax*/dax* 2>/dev/null | head -n 1)")
[ -n "$dax" ] || dax=$(ndctl list -N -n "$ns" | sed -n 's/.*"chardev":"\(dax[0-9.]*\)".*/\1/p')
[ -c "/dev/$dax" ] || { say "no device DAX for $ns"; exit 1; }
# where the device's data starts in the region (its first byte in the file)
region_start=$(cat "/sys/bus/nd/devices/${regions[0]}/resource")
dax_start=$(cat "/sys/bus/dax/devices/$dax/resource" 2>/dev/null ||
	cat "/sys/class/dax/$dax/resource")
echo "DEVDAX=/dev/$dax"
echo "DEVDAX_OFFSET=$((dax_start - region_start))"

ns=$(namespace "${regions[1]}" fsdax)
blk=$(ndctl list -N -n "$ns" | sed -n 's/.*"blockdev":"\(pmem[0-9.]*\)".*/\1/p')
[ -b "/dev/$blk" ] || { say "no block device for $ns"; exit 1; }
mkfs.ext4 -q -F -b 4096 -E nodiscard "/dev/$blk"
mkdir -p /mnt/rxe-fsdax
mount -o dax "/dev/$blk" /mnt/rxe-fsdax
echo "FSDAX_DIR=/mnt/rxe-fsdax"

if [ "${1:-}" != NO_DISK ]; then
	disk=$(lsblk -dnpo NAME,TYPE 2>/dev/null | awk '$2 == "disk" && $1 ~ /vd/ {print $1; exit}')
	[ -n "$disk" ] || disk=/dev/vda
	[ -b "$disk" ] || { say "no virtio disk"; exit 1; }
	mkfs.ext4 -q -F -E nodiscard "$disk"
	mkdir -p /mnt/rxe-disk
	mount "$disk" /mnt/rxe-disk
	echo "DISK_DIR=/mnt/rxe-disk"
fi
