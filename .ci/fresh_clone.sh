#!/usr/bin/env bash
# A newcomer's first hour, replayed: clone the repository into a temporary folder, make a
# fresh virtual environment, and run the README's two quick-start commands in the README's
# order and in the reverse order; after each command `import rntk` must work from another
# folder. The second command runs the whole test suite. Takes a while: every dependency,
# torch's CPU wheel included, is installed into each environment.
#
#   bash .ci/fresh_clone.sh            # both orders
#   bash .ci/fresh_clone.sh readme     # only the README's order
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
orders=${1:-"readme reversed"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
commands=$(awk '/^```bash$/{f=1; next} /^```$/{if (f) exit} f' "$repo/README.md")
first=$(printf '%s\n' "$commands" | sed -n 1p | sed 's/ *#.*$//')
second=$(printf '%s\n' "$commands" | sed -n 2p | sed 's/ *#.*$//')
[ -n "$first" ] && [ -n "$second" ] || { echo "cannot read the README's two commands"; exit 1; }

check_import() {
  (cd "$work" && python -c "import rntk; from rntk import RNTKClassifier, rntk_kernel; \
print('import rntk ok:', rntk.__file__)")
}

for order in $orders; do
  echo "=== $order order"
  dir="$work/$order"
  git clone -q "$repo" "$dir"
  python3 -m venv "$dir/.venv"
  # shellcheck disable=SC1091
  source "$dir/.venv/bin/activate"
  python -m pip install -q --upgrade pip
  python -m pip install -q torch==2.13.0   # the CPU wheel, before any extra pulls torch
  cd "$dir"
  if [ "$order" = readme ]; then run=("$first" "$second"); else run=("$second" "$first"); fi
  for cmd in "${run[@]}"; do
    echo "+ $cmd"
    eval "$cmd"
    check_import
  done
  deactivate
  cd "$repo"
done
echo "fresh clone: both commands work in: $orders"
