#!/usr/bin/env bash
# The engine's shape, as docs/architecture.md states it, checked on the built objects and the
# sources:
#   - no import cycle between folders, nor between the files of one folder: file A imports
#     file B when A's object calls or uses a symbol that B's object defines (nm);
#   - folders below cli/ never use anything that cli/ defines;
#   - the order of folders that docs/architecture.md draws (between its "layers" markers): a
#     folder uses, by linked symbols and by #include, only folders on lower rows;
# usage: layers_test.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
. "$src/tests/lib.sh"
af_need_or_exit "the layers (nm: binutils, installed with gcc)" nm

# ---- the objects of the project's own sources (stale objects of removed files left out) ----
: > "$tmp/syms"
n=0
while IFS= read -r o; do
  rel=${o#*.dir/}
  rel=${rel%.o}
  case "$rel" in tests/* | bench/* | fuzz/*) continue ;; esac
  [ -f "$src/$rel" ] || continue
  n=$((n + 1))
  nm "$o" | awk -v f="$rel" 'NF >= 2 { t = $(NF - 1); s = $NF
    if (t ~ /^[TDBRCVW]$/) print "def", f, s; else if (t == "U") print "use", f, s }' >> "$tmp/syms"
done < <(find "$build/CMakeFiles" -name '*.c.o' | sort)
[ "$n" -ge 20 ] || bad "only $n objects found under $build/CMakeFiles: is it built?"

# file -> file edges, and a cycle check by transitive closure (a few dozen files)
awk '$1 == "def" { def[$3] = $2 } $1 == "use" { use[++n] = $2 " " $3 }
  END { for (i = 1; i <= n; i++) { split(use[i], u, " "); if ((u[2] in def) && def[u[2]] != u[1])
          print u[1], def[u[2]], u[2] } }' "$tmp/syms" | sort -u > "$tmp/edges"
cycles() { # stdin: "A B" edges; prints "A B" for each pair on a cycle (A < B)
  awk '{ e[$1, $2] = 1; v[$1] = 1; v[$2] = 1 }
    END { m = 0; for (x in v) node[++m] = x
      for (k = 1; k <= m; k++) for (i = 1; i <= m; i++) if (e[node[i], node[k]])
        for (j = 1; j <= m; j++) if (e[node[k], node[j]]) e[node[i], node[j]] = 1
      for (i = 1; i <= m; i++) for (j = 1; j <= m; j++)
        if (node[i] < node[j] && e[node[i], node[j]] && e[node[j], node[i]]) print node[i], node[j] }'
}
awk '{ print $1, $2 }' "$tmp/edges" | sort -u | cycles > "$tmp/filecycles"
while read -r a b; do
  why1=$(awk -v a="$a" -v b="$b" '$1 == a && $2 == b { print $3; exit }' "$tmp/edges")
  why2=$(awk -v a="$a" -v b="$b" '$1 == b && $2 == a { print $3; exit }' "$tmp/edges")
  bad "import cycle between files $a and $b${why1:+ ($a uses $why1}${why2:+, $b uses $why2)}"
done < "$tmp/filecycles"
awk '{ split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1]) print a[1], b[1] }' "$tmp/edges" \
  | sort -u > "$tmp/folderedges"
while read -r a b; do
  bad "import cycle between folders $a/ and $b/"
done < <(cycles < "$tmp/folderedges")
while read -r a b sym; do
  bad "$a uses $sym from $b: nothing below cli/ may use cli/"
done < <(awk '$2 ~ /^cli\// && $1 !~ /^cli\//' "$tmp/edges")
[ "$(wc -l < "$tmp/edges")" -gt 30 ] || bad "only $(wc -l < "$tmp/edges") imports found: the check is broken"

# ---- the documented order of folders: each row may use only the rows below it ----
awk '/^<!-- layers -->$/ { on = 1; next } /^<!-- \/layers -->$/ { on = 0 }
  on && !/^```/ && NF { r++; for (i = 1; i <= NF; i++) print $i, r }' "$src/docs/architecture.md" \
  > "$tmp/rank"
[ "$(wc -l < "$tmp/rank")" -ge 10 ] || bad "docs/architecture.md draws no order of folders (<!-- layers --> ... <!-- /layers -->)"
# folder -> folder by #include "...", resolved against the including file's folder
( cd "$src" && for f in $(find . -name '*.[ch]' | sed 's#^\./##' | grep -vE '^(tests|bench|fuzz|build[^/]*)/'); do
    d=${f%%/*}
    [ "$d" != "$f" ] || continue
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while IFS= read -r inc; do
      p=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
      echo "$d ${p%%/*} $f $inc"
    done
  done ) | awk '$1 != $2' > "$tmp/includes"
[ "$(wc -l < "$tmp/includes")" -gt 20 ] || bad "only $(wc -l < "$tmp/includes") includes across folders found: the check is broken"
for d in $(awk '{ print $1 }' "$tmp/includes" "$tmp/folderedges" | sort -u); do
  grep -q "^$d " "$tmp/rank" || bad "folder $d/ is not in docs/architecture.md's order of folders"
done
while read -r a b how; do
  bad "$a/ uses $b/ ($how), which docs/architecture.md does not place below it"
done < <(awk 'NR == FNR { rank[$1] = $2; next }
  FILENAME ~ /includes$/ && ($1 in rank) && ($2 in rank) && rank[$2] <= rank[$1] { print $1, $2, $3 " includes " $4 }
  FILENAME ~ /folderedges$/ && ($1 in rank) && ($2 in rank) && rank[$2] <= rank[$1] { print $1, $2, "linked symbols" }' \
  "$tmp/rank" "$tmp/includes" "$tmp/folderedges")

echo "layers: $n objects, $(wc -l < "$tmp/edges") imports, $(wc -l < "$tmp/includes") includes across folders"
if [ "$fail" -eq 0 ]; then echo "layers: ok"; else echo "layers: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
