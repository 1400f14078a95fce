#!/usr/bin/env bash
# Prepares the default dataset once: the English text of Debian's fortunes-min package
# (/usr/share/games/fortunes/{fortunes,literature,riddles}; installed by scripts/setup.sh) into
# llm.c-format token shards in data/fortunes/ (train_*.bin, val_*.bin, dataset.json).
#
# A no-op when the data is already prepared from the same inputs with the same options: the
# output holds a stamp (hash of the input files, the tokenizer files and the options) and the
# work is redone only when it changes.
#
# Usage: scripts/prepare-default-data.sh [--tokenizer gpt2 --vocab vocab.json --merges merges.txt]
# Environment: ZEROTRAIN (the binary; default build/zerotrain),
#              ZT_DATA_DIR (output; default data/fortunes), ZT_FORTUNES_DIR, ZT_VAL_FRACTION (0.1).
set -euo pipefail
cd "$(dirname "$0")/.."

zerotrain=${ZEROTRAIN:-build/zerotrain}
out=${ZT_DATA_DIR:-data/fortunes}
fortunes_dir=${ZT_FORTUNES_DIR:-/usr/share/games/fortunes}
val_fraction=${ZT_VAL_FRACTION:-0.1}
# The text files only: each comes with a .dat index and a .u8 link that are not text to train on.
inputs=("$fortunes_dir/fortunes" "$fortunes_dir/literature" "$fortunes_dir/riddles")

for f in "${inputs[@]}"; do
  [ -f "$f" ] || { echo "prepare-default-data: $f is missing; install fortunes-min (scripts/setup.sh)" >&2; exit 1; }
done
[ -x "$zerotrain" ] || { echo "prepare-default-data: $zerotrain not found; build first (scripts/build.sh)" >&2; exit 1; }

# Tokenizer files named in the arguments are hashed too, so a changed vocabulary re-prepares.
tokenizer_files=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in --vocab|--merges) tokenizer_files+=("${args[i + 1]:-}") ;; esac
done

stamp=$( {
  echo "prepare-default-data v1 val_fraction=$val_fraction args=$*"
  sha256sum "${inputs[@]}" "${tokenizer_files[@]}" | cut -d' ' -f1
} | sha256sum | cut -d' ' -f1)

if [ -f "$out/.stamp" ] && [ -f "$out/dataset.json" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
  echo "prepare-default-data: $out is up to date"
  exit 0
fi

rm -f "$out/.stamp"
"$zerotrain" prepare-data --input "${inputs[@]}" --output "$out" --val-fraction "$val_fraction" "$@"
echo "$stamp" > "$out/.stamp"
echo "prepare-default-data: wrote $out"
