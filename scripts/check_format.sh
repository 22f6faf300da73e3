#!/usr/bin/env bash
# The style check: every C++ and CUDA file of the repository is as clang-format
# 14 writes it (.clang-format: GNU Radio's style, 90 columns). Lists the files
# that differ and exits 1; `scripts/check_format.sh --fix` rewrites them.
# Exits 77 (a skip for ctest) where clang-format 14 is not installed: another
# version formats some constructs differently.
set -u
cd "$(dirname "$0")/.."
fmt=""
for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" > /dev/null &&
        "$candidate" --version | grep -q "version 14\."; then
        fmt=$candidate
        break
    fi
done
if [ -z "$fmt" ]; then
    echo "clang-format 14 not found (apt install clang-format-14): style not checked"
    exit 77
fi
mapfile -t files < <(git ls-files -- 'lib/*' 'include/*' 'apps/*' 'tests/*' 'python/*' 'grc/*' |
    grep -E '\.(h|cc|cu)$')
if [ "${1:-}" = "--fix" ]; then
    "$fmt" -i "${files[@]}"
    exit 0
fi
bad=()
for f in "${files[@]}"; do
    "$fmt" --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
    echo "${#bad[@]} of ${#files[@]} files are not formatted (scripts/check_format.sh --fix):"
    printf '  %s\n' "${bad[@]}"
    exit 1
fi
echo "all ${#files[@]} C++ and CUDA files formatted (clang-format 14, .clang-format)"
