#!/bin/sh
# Each configuration's final steering from a campaign's summary.json, as test_property's recorded
# steering test reads it (tests/data/steering-600s.txt): NAME<TAB>ENTRY;ENTRY;... per line.
# usage: record-steering.sh SUMMARY.json > tests/data/steering-600s.txt
case "${1:-}" in -h | --help | "") sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
[ -f "$1" ] || { echo "record-steering.sh: no summary at $1" >&2; exit 2; }
echo "# the final steering of a campaign: $(sed -n 's/.*"swarm": [a-z]*, "cases": \([0-9]*\), .*"seconds": \([0-9.]*\).*/\1 cases in \2 s/p' "$1" | head -1)"
grep '"axes": .*"steering": ' "$1" |
  sed -n 's/^ *{"name": "\([^"]*\)".*"steering": {"avoid": \[\([^]]*\)\].*/\1\t\2/p' |
  sed 's/", "/;/g; s/\t"/\t/; s/"$//'
