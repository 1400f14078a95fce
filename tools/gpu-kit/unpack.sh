#!/usr/bin/env bash
# Decompresses the kit's large files in place (FILE.xz -> FILE, the .xz kept), once; run.sh calls
# it first. build.sh compresses every file over 2 MiB so that the kit travels in under 64 MiB.
# Uses xz where the machine has it, else Python's lzma module.
set -euo pipefail
kit=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
while IFS= read -r -d '' packed; do
  file=${packed%.xz}
  [ -e "$file" ] && continue
  [ -w "${file%/*}" ] || { echo "gpu-kit: ${file%/*} is not writable; copy the kit somewhere writable first" >&2; exit 1; }
  if command -v xz >/dev/null 2>&1; then
    xz -dc "$packed" > "$file.part"
  else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$packed" "$file.part"
  fi
  chmod --reference="$packed" "$file.part"
  mv "$file.part" "$file"
done < <(find "$kit" -type f -name '*.xz' -print0)
