#!/usr/bin/env bash
# Every external command that the project's scripts, tests and benchmarks run must come from a
# bare Debian 12 (debootstrap --variant=minbase: the packages of priority required, and apt) or
# from a package that scripts/bootstrap.sh --test installs (or one of their dependencies).
# Otherwise the README's commands fail on a fresh machine, as python3 once did in db_test.sh.
#
# shell_commands (tests/tools/shell_commands.c) lists the commands that stand in command position
# in each script. Each is looked up in the system directories only (not /usr/local, not a
# user's PATH), and its Debian package found with dpkg. A command the script only probes
# (`command -v X`) is optional: reported, not required.
# usage: deps_test.sh SHELL_COMMANDS SOURCE_DIR
set -u
lister=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
command -v dpkg-query > /dev/null || { echo "skip: the package list: not a Debian system (no dpkg-query)"; exit 77; }

# ---- the lister itself, on a script whose commands are known ----
"$lister" "$src/tests/data/shell-commands.sh" > "$tmp/fixture" || bad "shell_commands failed on the fixture"
sed -n 's/^# expect: //p' "$src/tests/data/shell-commands.sh" | sort > "$tmp/want"
awk '{print $1, $2}' "$tmp/fixture" | sort -u > "$tmp/got"
if ! cmp -s "$tmp/want" "$tmp/got"; then
  bad "shell_commands lists the fixture's commands wrongly (< expected, > listed):"
  diff "$tmp/want" "$tmp/got" | grep '^[<>]' | sed 's/^/  | /'
fi

# ---- what the scripts run ----
cd "$src" || exit 2
scripts=()
for f in .ci/run scripts/*.sh tests/*.sh tests/tools/*.sh bench/*.sh; do
  [ -f "$f" ] && scripts+=("$f")
done
[ ${#scripts[@]} -gt 5 ] || bad "found only ${#scripts[@]} scripts to check"
"$lister" "${scripts[@]}" > "$tmp/all" || bad "shell_commands failed"
awk '$1 == "func" {print $2}' "$tmp/all" | sort -u > "$tmp/funcs"
awk '$1 == "probe" {print $2}' "$tmp/all" | sort -u > "$tmp/probes"
{ compgen -b; compgen -k; } | sort -u > "$tmp/shell"
# first use of each command
awk '$1 == "cmd" && !seen[$2]++ {print $2, $3}' "$tmp/all" | sort > "$tmp/cmds"
[ "$(wc -l < "$tmp/cmds")" -gt 20 ] || bad "only $(wc -l < "$tmp/cmds") commands found: the lister is broken"

# ---- the packages allowed: minbase, bootstrap's list, and everything they depend on ----
"$src/scripts/bootstrap.sh" --list --test > "$tmp/boot" || bad "bootstrap.sh --list failed"
grep -qx cmake "$tmp/boot" || bad "bootstrap.sh --list does not list cmake"
# package, essential, priority, dependencies (first alternative of each), what it provides
dpkg-query -W -f='${binary:Package}\t${Essential}\t${Priority}\t${Pre-Depends}, ${Depends}\t${Provides}\n' \
  > "$tmp/status" 2> /dev/null
awk -F'\t' -v boot="$tmp/boot" '
  function base(p) { sub(/:.*/, "", p); sub(/[ (].*/, "", p); return p }
  BEGIN { while ((getline l < boot) > 0) root[l] = 1 }
  {
    p = base($1); pkg[p] = 1
    if ($2 == "yes" || $3 == "required" || p == "apt") root[p] = 1
    deps[p] = $4
    n = split($5, pv, /, */)
    for (i = 1; i <= n; i++) if (pv[i] != "") { v = base(pv[i]); if (!(v in prov)) prov[v] = p }
  }
  END {
    for (p in root) queue[++qn] = p
    for (k = 1; k <= qn; k++) {
      p = queue[k]
      if (!(p in pkg) && (p in prov)) p = prov[p]
      if (p in ok) continue
      ok[p] = 1
      n = split(deps[p], d, /, */)
      for (i = 1; i <= n; i++) {
        split(d[i], alt, / *\| */)
        q = base(alt[1])
        if (q != "") queue[++qn] = q
      }
    }
    for (p in ok) print p
  }' "$tmp/status" | sort -u > "$tmp/allowed"
for p in bash coreutils grep sed; do
  grep -qx "$p" "$tmp/allowed" || bad "the base system's packages are not found ($p missing)"
done

# The package that owns a command, looked up in the system directories only.
owner() {
  local path real p
  path=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P "$1") || return 1
  real=$(readlink -f "$path")
  for p in "$path" "$real" "${path#/usr}" "${real#/usr}" "/usr${path#/usr}" "/usr${real#/usr}"; do
    dpkg -S "$p" 2> /dev/null | sed -n '1s/:.*//p' | sed 's/, .*//' | grep . && return 0
  done
  echo "?$path"
}

printf '%-22s %-28s %s\n' command package "first used at" > "$tmp/table"
while read -r cmd where; do
  grep -qx -- "$cmd" "$tmp/shell" && continue
  grep -qx -- "$cmd" "$tmp/funcs" && continue
  if ! pkg=$(owner "$cmd"); then
    if grep -qx -- "$cmd" "$tmp/probes"; then
      printf '%-22s %-28s %s\n' "$cmd" "(absent; probed, optional)" "$where" >> "$tmp/table"
    else
      bad "$cmd ($where) is not installed in the system directories: add its package to scripts/bootstrap.sh, or use a tool the base system has"
    fi
    continue
  fi
  case "$pkg" in
    \?*) bad "$cmd ($where) is ${pkg#\?}, which no Debian package installed: bootstrap cannot provide it" ;;
    *) grep -qx -- "$pkg" "$tmp/allowed" \
      || bad "$cmd ($where) comes from package $pkg, which is neither in a minbase Debian 12 nor installed by scripts/bootstrap.sh --test" ;;
  esac
  printf '%-22s %-28s %s\n' "$cmd" "$pkg" "$where" >> "$tmp/table"
done < "$tmp/cmds"
# the probed tools that are there are reported too
while read -r p; do
  pkg=$(owner "$p") || continue
  grep -q "^$p " "$tmp/table" || printf '%-22s %-28s %s\n' "$p" "$pkg (probed)" "" >> "$tmp/table"
done < "$tmp/probes"
cat "$tmp/table"

if [ "$fail" -eq 0 ]; then echo "deps: ok ($(($(wc -l < "$tmp/table") - 1)) external commands checked)"; else echo "deps: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
