#!/bin/sh
# Trims /opt/retrieval-eval while docker/base.Dockerfile builds it, and stages it for the
# image's one layer:
#
#   sh docker/trim-venv.sh /opt/retrieval-eval /tmp/staged
#
# 1. Removes what no run of the Action loads, beyond the distributions docker/unused.txt
#    uninstalls (docs/container.md lists each with its size): the distributions' own test
#    suites; onnxruntime's C library (libonnxruntime.so, for C programs: the Python module
#    links the runtime in itself) and its model tools (the quantizer, which only
#    `retrieval-eval model install` uses, and the image's install has run before this
#    script, the transformers optimiser, the converters); type stubs (.pyi), which only a type checker
#    reads. The container tests run the whole Action in the image without them.
# 2. Strips the debugging symbols some wheels ship in their extension modules, except in the
#    `<name>.libs` folders, whose libraries auditwheel rewrote and strip could damage.
# 3. Compiles every module once, into a hash-checked .pyc file next to its source (they hold
#    no timestamp, so two builds write the same bytes), and deletes the source: Python then
#    imports the .pyc alone, and a traceback through a dependency shows its file and line
#    number but not the line's text. The project's own modules, in the top image's layer,
#    keep their sources.
# 4. Moves the folder to the same path under the stage folder and sets every file's time
#    to SOURCE_DATE_EPOCH (default 0). The image copies the stage's contents to `/`, which
#    gives `/opt` and all below it those times too: two builds of the same files give the
#    same layer, byte for byte (tests/container/test_image.py builds twice).
set -eu
root=${1:?usage: trim-venv.sh /opt/retrieval-eval STAGE_DIR}
stage=${2:?usage: trim-venv.sh /opt/retrieval-eval STAGE_DIR}
site=$(echo "$root"/venv/lib/python3*/site-packages)
[ -d "$site" ] || { echo "trim-venv: no site-packages under $root/venv" >&2; exit 2; }

find "$site" -depth -type d \( -name tests -o -name __pycache__ \) -exec rm -rf {} +
rm -rf "$site/chromadb/test" "$site/onnxruntime/quantization" \
  "$site/onnxruntime/transformers" "$site/onnxruntime/tools"
rm -f "$site"/onnxruntime/capi/libonnxruntime.so.*
find "$site" -name '*.pyi' -type f -delete

find "$site" -name '*.so*' -type f -not -path '*.libs/*' -exec strip --strip-unneeded {} +

"$root/venv/bin/python" -m compileall -q -j 0 -b --invalidation-mode unchecked-hash "$site" >/dev/null
find "$site" -name '*.py' -type f -exec sh -c 'for py; do [ ! -f "${py}c" ] || rm "$py"; done' sh {} +

mkdir -p "$stage$(dirname "$root")"
mv "$root" "$stage$(dirname "$root")/"
find "$stage" -exec touch --no-dereference --date="@${SOURCE_DATE_EPOCH:-0}" {} +
