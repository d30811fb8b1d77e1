#!/usr/bin/env bash
# The documentation against the tree and the command:
#   - the README's tour (between its "tour" markers) names every source folder, and only folders
#     that exist;
#   - no fact is lost: every option and ASYNCFUZZ_* variable of tests/data/readme-facts.txt (what
#     the README documented before it became a front door), every command `asyncfuzz --help`
#     lists and every exit code it names appears in README.md or docs/*.md;
#   - every relative link of README.md and docs/*.md leads to a file of the repository.
# usage: docs_test.sh SOURCE_DIR ASYNCFUZZ
set -u
src=$1 af=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
cd "$src" || exit 2
cat README.md docs/*.md > "$tmp/all"

# ---- the tour ----
awk '/^<!-- tour -->$/ { on = 1; next } /^<!-- \/tour -->$/ { on = 0 } on' README.md \
  | sed -n 's/^| `\([a-z_]*\)\/` |.*/\1/p' | sort > "$tmp/tour"
[ "$(wc -l < "$tmp/tour")" -ge 8 ] || bad "the README has no tour of the folders (<!-- tour --> ... <!-- /tour -->)"
find . -name '*.[ch]' | sed 's#^\./##' | grep '/' | cut -d/ -f1 \
  | grep -vE '^(tests|bench|fuzz|build[^/]*|cmake|scripts|corpus)$' | sort -u > "$tmp/folders"
while read -r d; do bad "the README's tour does not name $d/"; done < <(comm -23 "$tmp/folders" "$tmp/tour")
while read -r d; do bad "the README's tour names $d/, which holds no source"; done < <(comm -13 "$tmp/folders" "$tmp/tour")
echo "docs: tour of $(wc -l < "$tmp/tour") folders"

# ---- no fact lost ----
n=0
while read -r fact; do
  case "$fact" in '' | '#'*) continue ;; esac
  n=$((n + 1))
  grep -qE -- "$fact([^A-Za-z0-9_-]|$)" "$tmp/all" || bad "$fact is documented nowhere (README.md, docs/)"
done < tests/data/readme-facts.txt
[ "$n" -ge 50 ] || bad "only $n facts in tests/data/readme-facts.txt"
"$af" --help > "$tmp/help" 2>&1 || bad "asyncfuzz --help failed"
cmds=$(awk '/^commands:/ { on = 1; next } on && NF == 0 { on = 0 } on { print $1 }' "$tmp/help")
[ "$(echo "$cmds" | wc -w)" -ge 15 ] || bad "asyncfuzz --help lists only $(echo "$cmds" | wc -w) commands"
for c in $cmds; do
  grep -qE "asyncfuzz $c([^a-z-]|$)" "$tmp/all" || bad "the command $c is documented nowhere"
done
codes=$(sed -n '/^exit codes:/,$p' "$tmp/help" | grep -oE '(^|[ ,:])[0-9] ' | tr -dc '0-9\n ' | tr -s ' \n' '\n' | sort -u)
[ "$(echo "$codes" | wc -w)" -ge 5 ] || bad "asyncfuzz --help names only $(echo "$codes" | wc -w) exit codes"
for e in $codes; do
  grep -q "^| $e | " "$tmp/all" || bad "exit code $e has no row in the documentation's table"
done
echo "docs: $n facts, $(echo "$cmds" | wc -w) commands, $(echo "$codes" | wc -w) exit codes"

# ---- links ----
nl=0
for f in README.md docs/*.md; do
  dir=$(dirname "$f")
  while IFS= read -r l; do
    nl=$((nl + 1))
    t=${l%%#*}
    [ -n "$t" ] || continue
    case "$t" in *://* | mailto:*) continue ;; esac
    p=$(realpath -m --relative-to=. "$dir/$t")
    case "$p" in ../*) bad "$f links outside the repository: $l" ;; esac
    [ -e "$p" ] || bad "$f links to $l, which does not exist"
  done < <(grep -oE '\]\([^)]+\)' "$f" | sed 's/^](//; s/)$//')
done
[ "$nl" -ge 20 ] || bad "only $nl links found: the check is broken"
echo "docs: $nl links"

if [ "$fail" -eq 0 ]; then echo "docs: ok"; else echo "docs: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
