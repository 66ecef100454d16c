#!/usr/bin/env bash
# powercut-check.sh -- on the host, after powercut.sh cut the VM's power:
# every record a stream acknowledged is where it was written, byte for
# byte: in the NVDIMM's backing file (at the device DAX's place in it) and
# in the file of the disk image (its journal replayed by e2fsck, the file
# taken out with debugfs, as a second boot would find it).
#
# usage: powercut-check.sh OUT NVDIMM_FILE DISK_IMAGE PMEM_STREAM
set -u
OUT=$1 NVDIMM=$2 DISK=$3 STREAM=$4
[ -f "$OUT/layout" ] || { echo "powercut-check: no layout in $OUT (the VM did not get to the streams)"; exit 1; }
# shellcheck disable=SC1091
. "$OUT/layout"
r=0
check() { # NAME WHAT FILE OFFSET
	if out=$("$STREAM" check "$3" "$4" "$OUT/$1.log" 2>&1); then
		echo "ok    power cut: $2: $out"
	else
		echo "FAIL  power cut: $2: $out"; r=1
	fi
}
check a "device DAX over verbs" "$NVDIMM" $((DEVDAX_OFFSET + A_OFFSET))
check b "device DAX over tcp" "$NVDIMM" $((DEVDAX_OFFSET + B_OFFSET))
# as the next boot would mount it: the journal replayed first
e2fsck -fy "$DISK" > "$OUT/e2fsck.log" 2>&1
[ $? -le 1 ] || { echo "FAIL  power cut: e2fsck of the disk:"; tail -5 "$OUT/e2fsck.log"; r=1; }
if debugfs -R "dump $C_FILE $OUT/stream.dat" "$DISK" > "$OUT/debugfs.log" 2>&1 &&
		[ -s "$OUT/stream.dat" ]; then
	check c "page-cache file over tcp (cache=none disk)" "$OUT/stream.dat" 0
else
	echo "FAIL  power cut: $C_FILE is not on the disk:"; tail -5 "$OUT/debugfs.log"; r=1
fi
rm -f "$OUT/stream.dat"
exit $r
