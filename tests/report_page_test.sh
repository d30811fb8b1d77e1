#!/bin/sh
# report_page: the HTML report as a triager first sees it, rendered by headless Chromium at
# 1400x900 and measured with the page's own layout (element bounding boxes), on a database of
# two real campaigns and made-up findings up to 40 (tests/tools/synth-findings.sh):
#   - at least 20 finding lines above the fold, and no element wider than the viewport (with a
#     finding's section open too);
#   - a line opens its section, with the minimized reproducer in a block with a copy button;
#   - the text filter and the class filter reduce the lines; a heading sorts them;
#   - the discovery curve and the cases/s chart have one point per progress record;
#   - markup and quotes in a cause, a detail and a reproducer are text: no script of theirs runs.
# A screenshot of the first screen goes to OUTDIR/report-page.png.
# usage: report_page_test.sh ASYNCFUZZ SRCDIR [OUTDIR]
set -u
af=$1
src=$2
outdir=${3:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
  echo "FAIL: $*"
  fail=$((fail + 1))
}
. "$src/tests/lib.sh"
af_need_or_exit "the report page" sqlite3
chromium=$(af_tool chromium || af_tool chromium-browser || true)
[ -n "$chromium" ] || af_need_or_exit "the report page" chromium

# two real campaigns (runs, progress records, findings with minimized reproducers)
for f in drop_extra_deps free_unordered; do
  "$af" campaign --lowering "builtin:fault=$f" --seconds 6 --out "$tmp/c-$f" --db "$tmp/r.db" \
    > "$tmp/c.out" 2>&1
  [ $? -le 1 ] || bad "campaign $f: $(tail -3 "$tmp/c.out")"
done
real=$(sqlite3 "$tmp/r.db" "SELECT count(*) FROM findings")
bash "$src/tests/tools/synth-findings.sh" "$tmp/r.db" $((40 - real)) || bad "synth-findings"
[ "$(sqlite3 "$tmp/r.db" "SELECT count(*) FROM findings")" = 40 ] || bad "the database has not 40 findings"
points=$(sqlite3 "$tmp/r.db" "SELECT count(*) FROM progress")
rate=$(sqlite3 "$tmp/r.db" "SELECT count(*) FROM progress WHERE at > 0")
[ "$points" -ge 2 ] || bad "the campaigns recorded $points progress record(s)"
"$af" report --html "$tmp/page.html" --db "$tmp/r.db" > /dev/null 2>&1 || bad "report"

# the page as is, with a measuring script at its end (after the page's own has run)
cat > "$tmp/measure.js" << 'EOF'
(function () {
  var out = [], H = innerHeight, W = innerWidth;
  function say(k, v) { out.push(k + "=" + v); }
  function wider() {
    var n = 0, who = "";
    [].forEach.call(document.querySelectorAll("body *"), function (e) {
      var b = e.getBoundingClientRect();
      if (b.width > 0 && (b.width > W || b.right > W + 1)) { n++; if (!who) who = e.tagName + "." + e.className; }
    });
    return n + (who ? " (" + who + ")" : "");
  }
  var rows = [].slice.call(document.querySelectorAll("#findings tr.f"));
  say("rows", rows.length);
  say("above", rows.filter(function (r) { var b = r.getBoundingClientRect(); return b.height > 0 && b.bottom <= H; }).length);
  say("wider", wider());
  say("scrollwidth", document.documentElement.scrollWidth <= W ? "ok" : document.documentElement.scrollWidth);
  var x = rows[0].nextElementSibling;
  say("closed", x.hidden ? 1 : 0);
  rows[0].click();
  say("opened", !x.hidden && x.getBoundingClientRect().height > 0 ? 1 : 0);
  var pre = x.querySelector("pre.code");
  say("reproducer", pre && pre.getBoundingClientRect().height > 0 && /RUN:/.test(pre.textContent) ? 1 : 0);
  say("copy", x.querySelector("button.cp") ? 1 : 0);
  say("wideropen", wider());
  rows[0].click();
  var fq = document.getElementById("fq");
  function visible() { return [].filter.call(document.querySelectorAll("#findings>tbody"), function (b) { return !b.hidden; }).length; }
  fq.value = "zz-unique-token"; fq.dispatchEvent(new Event("input"));
  say("textfilter", visible());
  fq.value = ""; fq.dispatchEvent(new Event("input"));
  var fc = document.getElementById("fc"); fc.value = "lowering_unconverted"; fc.dispatchEvent(new Event("change"));
  say("classfilter", visible());
  fc.value = ""; fc.dispatchEvent(new Event("change"));
  say("unfiltered", visible());
  document.querySelector("#findings th[data-k=count]").click();
  var counts = [].map.call(document.querySelectorAll("#findings>tbody"), function (b) { return +b.rows[0].cells[4].textContent; });
  say("sorted", counts.every(function (c, i) { return i == 0 || counts[i - 1] >= c; }) ? 1 : 0);
  say("points", document.querySelectorAll("#discovery circle.pt").length);
  say("ratepoints", document.querySelectorAll("#rate circle.pt").length);
  say("shares", document.querySelectorAll("#shares rect").length);
  var evil = [].filter.call(document.querySelectorAll("#findings>tbody"), function (b) { return b.rows[0].cells[3].title.indexOf("__xss = 1") >= 0; })[0];
  evil.rows[0].click();
  var text = evil.textContent;
  say("astext", text.indexOf("<script>window.__xss = 1</script>") >= 0 &&
    text.indexOf("</pre><script>window.__xss = 3</script>") >= 0 && text.indexOf("window.__xss = 4") >= 0 ? 1 : 0);
  say("xss", typeof window.__xss === "undefined" ? "none" : window.__xss);
  say("scripts", document.scripts.length);
  var p = document.createElement("pre"); p.id = "measured"; p.textContent = "\n" + out.join("\n") + "\n";
  document.body.appendChild(p);
})();
EOF
sed 's|</body></html>|<script src="measure.js"></script></body></html>|' "$tmp/page.html" > "$tmp/m.html"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --window-size=1400,900 --allow-file-access-from-files --virtual-time-budget=3000 \
  --dump-dom "file://$tmp/m.html" > "$tmp/dom.html" 2> "$tmp/chromium.err"
sed -n '/<pre id="measured">/,/<\/pre>/p' "$tmp/dom.html" | grep '^[a-z]*=' > "$tmp/m"
[ -s "$tmp/m" ] || { bad "chromium measured nothing: $(tail -3 "$tmp/chromium.err")"; exit 1; }
sed 's/^/  /' "$tmp/m"
get() { sed -n "s/^$1=//p" "$tmp/m"; }
[ "$(get rows)" = 40 ] || bad "$(get rows) finding lines, not 40"
[ "$(get above)" -ge 20 ] || bad "$(get above) finding lines above the fold at 1400x900 (want 20)"
[ "$(get wider)" = 0 ] || bad "elements wider than the viewport: $(get wider)"
[ "$(get wideropen)" = 0 ] || bad "with a section open, elements wider than the viewport: $(get wideropen)"
[ "$(get scrollwidth)" = ok ] || bad "the page scrolls sideways ($(get scrollwidth) px)"
[ "$(get closed)" = 1 ] && [ "$(get opened)" = 1 ] || bad "a line does not open its section"
[ "$(get reproducer)" = 1 ] && [ "$(get copy)" = 1 ] || bad "no reproducer block with a copy button"
[ "$(get textfilter)" = 1 ] || bad "the text filter shows $(get textfilter) lines, not 1"
want=$(sqlite3 "$tmp/r.db" "SELECT count(*) FROM findings WHERE class = 'lowering_unconverted'")
[ "$(get classfilter)" = "$want" ] && [ "$want" -lt 40 ] || bad "the class filter shows $(get classfilter), not $want"
[ "$(get unfiltered)" = 40 ] || bad "without filters $(get unfiltered) lines"
[ "$(get sorted)" = 1 ] || bad "the count heading does not sort"
[ "$(get points)" = "$points" ] || bad "the discovery curve has $(get points) points for $points progress records"
[ "$(get ratepoints)" = "$rate" ] || bad "the cases/s chart has $(get ratepoints) points for $rate records"
[ "$(get shares)" -ge 2 ] || bad "no executed/clean bars"
[ "$(get xss)" = none ] || bad "a script from the database ran (window.__xss = $(get xss))"
[ "$(get astext)" = 1 ] || bad "the markup is not shown as text"
[ "$(get scripts)" = 3 ] || bad "$(get scripts) script elements (the page's two, its data and its code, and the measuring one expected)"
# the page itself needs no network: nothing loads from elsewhere
grep -qE '(src|href)="(https?:)?//' "$tmp/page.html" && bad "the page loads something from the network"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --window-size=1400,900 --screenshot="$outdir/report-page.png" "file://$tmp/page.html" > /dev/null 2>&1
[ -s "$outdir/report-page.png" ] || bad "no screenshot"
if [ "$fail" -eq 0 ]; then echo "report_page: all passed (screenshot: $outdir/report-page.png)"; else echo "report_page: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
