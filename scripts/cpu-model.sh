#!/usr/bin/env bash
# One line naming this machine's CPU for a report's "Machine" line: the model name, and, since one
# model name covers very different parts (two "AMD EPYC" machines here differ 2x on the default
# sweep), its family and model numbers and the per-core L1d and L2 and the L3, as lscpu gives them.
# For example: "AMD EPYC (family 25 model 17; L1d 32 KiB, L2 1 MiB per core, L3 32 MiB)".
set -euo pipefail
field() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | sed 's/.*: //'; }
name=$(field 'model name')
detail="family $(field 'cpu family') model $(field 'model')"
if command -v lscpu >/dev/null; then
    # lscpu -C: a header, then one line per cache level with its size per instance.
    caches=$(lscpu -C=NAME,ONE-SIZE 2>/dev/null \
        | awk '$1 == "L1d" { l1 = $2 } $1 == "L2" { l2 = $2 } $1 == "L3" { l3 = $2 }
               END { if (l1 != "") printf "L1d %s, L2 %s per core, L3 %s", l1, l2, l3 }' \
        | sed 's/\([0-9]\)\([KMG]\)/\1 \2iB/g')
    [ -n "$caches" ] && detail="$detail; $caches"
fi
echo "$name ($detail)"
