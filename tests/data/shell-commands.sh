#!/usr/bin/env bash
# A fixture for tests/deps_test.sh: the commands shell_commands must list (and no others).
# Not run. Every "# expect:" line is one line of its output, less the place.
# expect: cmd set
# expect: cmd python3
# expect: cmd jq
# expect: cmd grep
# expect: cmd sed
# expect: cmd cmp
# expect: cmd timeout
# expect: cmd xxd
# expect: cmd env
# expect: cmd bc
# expect: cmd bash
# expect: cmd perl
# expect: cmd trap
# expect: cmd rm
# expect: cmd cat
# expect: cmd hexdump
# expect: cmd awk
# expect: cmd file
# expect: cmd command
# expect: cmd echo
# expect: cmd curl
# expect: cmd strace
# expect: cmd eval
# expect: cmd ps
# expect: cmd wait
# expect: cmd gzip
# expect: cmd exec
# expect: cmd nproc
# expect: cmd helper
# expect: func helper
# expect: probe chromium
# expect: probe which-one
set -u
trap 'rm -rf "$tmp"' EXIT
helper() { cat "$1" | awk '{print $1}'; }
x=$(python3 -c 'print(1)' | jq . 2>/dev/null) || grep -q "not python3 | sed" "$x"
y="$(sed -n 1p "$0") and $(cmp -s a b && echo same)"
timeout -k 5 10 xxd -l 4 "$0" > /dev/null
env -u LD_LIBRARY_PATH A=1 bc <<< "1+1"
bash -c 'perl -e 1; file "$0"'
arr=(gcc not a command "$(hexdump -C /dev/null)")
if [ -n "$x" ]; then :; fi
for f in a b; do :; done
case "$x" in
  a | b) awk 1 /dev/null ;;
  *) command -v chromium which-one > /dev/null ;;
esac
cat << EOF
python2 is not a command here; neither is ruby
EOF
echo "text; with | separators && in it" # ; trailing comment | nodejs
curl --version || strace -V
eval "ps -e"
{ wait; } 2> /dev/null
n=$((3 + $(nproc)))
exec gzip -c "$0" > /dev/null
helper "$0"
