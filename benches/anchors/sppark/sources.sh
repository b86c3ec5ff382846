#!/usr/bin/env bash
# Lays out sppark's and blst's sources at their pinned commits, with this folder's drivers and
# build script, in DEST (default .device/anchors/sppark: the device tool carries .device), from
# git mirrors of the two repositories (SPPARK_GIT, BLST_GIT: their git directories). The GPU
# machine reaches nothing outside it, so the sources travel from here.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
DEST="${DEST:-$ROOT/.device/anchors/sppark}"
SPPARK_COMMIT=17278d74295392f9813f009300b257a688422b7a  # v0.1.15
BLST_COMMIT=dece82ea537b422890888bacde4034ca5b5a44d8
: "${SPPARK_GIT:?the git directory of a sppark mirror (github:supranational/sppark)}"
: "${BLST_GIT:?the git directory of a blst mirror (github:supranational/blst)}"
rm -rf "$DEST/src"
mkdir -p "$DEST/src/sppark" "$DEST/src/blst"
git --git-dir="$SPPARK_GIT" archive "$SPPARK_COMMIT" ec ff msm ntt util LICENSE | tar -x -C "$DEST/src/sppark"
git --git-dir="$BLST_GIT" archive "$BLST_COMMIT" src build/assembly.S build/elf bindings LICENSE | tar -x -C "$DEST/src/blst"
echo "${SPPARK_COMMIT:0:7}" >"$DEST/src/sppark/COMMIT"
echo "${BLST_COMMIT:0:7}" >"$DEST/src/blst/COMMIT"
cp -r "$HERE/driver" "$HERE/build.sh" "$DEST/"
du -sh "$DEST"
