#!/usr/bin/env bash
# layering.sh - the core's stages depend only downward.
#
# src/ is laid out as the path a byte takes from the store to the reader:
#   base < store < codec < text < zarr < label < chunk < view < tree
# A file in one stage may include headers of its own stage and of earlier
# ones only; a *_impl.h header is private to its folder (and the white-box
# unit tests); fs/ and tools/ see only public headers.  Usage: layering.sh REPO
set -u
repo=${1:-.}
cd "$repo" || exit 2
stages=(base store codec text zarr label chunk view tree)
declare -A rank
for i in "${!stages[@]}"; do rank[${stages[$i]}]=$i; done
bad=0
for dir in src/*/; do
    s=$(basename "$dir")
    [[ -n ${rank[$s]:-} ]] || { echo "src/$s: a folder that is not a stage"; bad=1; continue; }
done
while IFS= read -r f; do
    if [[ $f == src/*/* ]]; then
        own=${f#src/}; own=${own%%/*}
    else
        own=""
    fi
    while IFS= read -r inc; do
        st=${inc%%/*}
        [[ $inc == */* ]] || st=$own
        [[ -n $st && -n ${rank[$st]:-} ]] || continue
        if [[ -n $own && ${rank[$st]} -gt ${rank[$own]} ]]; then
            echo "$f includes $inc: $own may not depend on the later stage $st"
            bad=1
        fi
        if [[ $inc == *_impl.h && $st != "$own" && $f != tests/unit/* ]]; then
            echo "$f includes $inc: private to src/$st"
            bad=1
        fi
    done < <(sed -nE 's/^#include "([^"]+)".*/\1/p' "$f")
done < <(find src fs tools -name '*.[ch]' | sort)
((bad)) && exit 1
echo "layering: ok"
