#!/bin/sh
# The HTML report with many findings: the time `asyncfuzz report` takes to write it, its size,
# and the time headless Chromium takes to load it (navigation start to the page laid out after
# its own script drew the first lines and set up sorting and filtering: performance.now() read
# just after a forced layout), at 1400x900. Medians of RUNS. The database: one short real campaign and made-up findings up to
# N (tests/tools/synth-findings.sh).
# usage: report_page.sh ASYNCFUZZ [N=1000] [RUNS=5]
set -eu
case "${1:-}" in
-h | --help | "")
  echo "usage: report_page.sh ASYNCFUZZ [N=1000] [RUNS=5]"
  echo "Times asyncfuzz report --html and the page's load in headless Chromium with N findings."
  exit 0
  ;;
esac
af=$1
n=${2:-1000}
runs=${3:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "report_page: chromium is missing (scripts/bootstrap.sh --test installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$af" campaign --lowering builtin:fault=drop_extra_deps --seconds 3 --out "$tmp/c" --db "$tmp/r.db" \
  > /dev/null 2>&1 || true
real=$(sqlite3 "$tmp/r.db" "SELECT count(*) FROM findings")
bash "$here/tests/tools/synth-findings.sh" "$tmp/r.db" $((n - real))
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$tmp/gen"
: > "$tmp/load"
# (the probe lays the page out first: parse, data, the first lines drawn, style and layout)
echo '<script>document.body.getBoundingClientRect(); document.title = "loaded " + performance.now().toFixed(1);</script>' > "$tmp/probe"
for i in $(seq "$runs"); do
  t0=$(date +%s%N)
  "$af" report --html "$tmp/page.html" --db "$tmp/r.db" > /dev/null
  t1=$(date +%s%N)
  echo "$(((t1 - t0) / 1000000))" >> "$tmp/gen"
  sed "s|</body></html>|$(cat "$tmp/probe")</body></html>|" "$tmp/page.html" > "$tmp/m.html"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --window-size=1400,900 --dump-dom "file://$tmp/m.html" 2> /dev/null |
    sed -n 's/.*<title>loaded \([0-9.]*\)<\/title>.*/\1/p' >> "$tmp/load"
done
rows=$(sqlite3 "$tmp/r.db" "SELECT count(*) FROM findings")
echo "report page with $rows findings ($(wc -c < "$tmp/page.html") bytes), medians of $runs:"
echo "  asyncfuzz report --html: $(median < "$tmp/gen") ms"
echo "  Chromium: loaded, drawn and laid out: $(median < "$tmp/load") ms"
