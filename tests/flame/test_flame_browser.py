#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# test_flame_browser.py - the SVG flame graph of `vmp flame` in a real
# browser (headless Chromium): it renders to a PNG that is not blank, and its
# script runs: after loading FILE.svg?s=REGEX the dumped DOM shows the search's
# matched share, equal to the share of folded stacks with a matching frame
# (each stack counted once, however many frames match).  Exits 77 (skipped)
# when no Chromium is installed.
#
# usage: test_flame_browser.py VMP VMP_SIMVM WORKDIR
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

VMP, SIMVM, WORK = sys.argv[1:4]
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    print("chromium not found: skipped")
    sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def chromium(*args):
    profile = tempfile.mkdtemp(prefix="vmp-chromium-")
    try:
        p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-quic", "--no-first-run", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync",
                            "--user-data-dir=" + profile, *args],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def png_pixels(path):
    """(width, height, rows of RGB(A) tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, "unsupported PNG %r" % (hdr,)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
subprocess.run([SIMVM, "--seed", "21", "--samples", "5000", "-o", "sim.vmp"], check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
svg = os.path.abspath("flame.svg")
rc = subprocess.run([VMP, "flame", "--thread-root", "--state", "--min-width", "0.01", "-o", svg,
                     "sim.vmp"]).returncode
check(rc == 0, "vmp flame wrote the SVG")

# 1. The rendering is not blank: many colours, and frames cover a good area.
png = os.path.abspath("flame.png")
rc, _ = chromium("--screenshot=" + png, "--window-size=1200,800", "file://" + svg)
check(rc == 0 and os.path.exists(png), "chromium wrote a screenshot")
if os.path.exists(png):
    w, h, rows = png_pixels(png)
    colours = {}
    for row in rows:
        for px in row:
            colours[px] = colours.get(px, 0) + 1
    common = max(colours.values())
    check(len(colours) >= 20, "distinct colours: %d" % len(colours))
    # The frames' colours: green (JIT), red/orange (C), blue (GC), lavender.
    greens = sum(n for (r, g, b), n in colours.items() if g > 150 and r < 140 and b < 140)
    check(greens > 2000, "JIT-green pixels: %d" % greens)
    check(common < w * h * 0.95, "not a single colour")

# 2. The script ran: search from the query string, matched share in the DOM.
regex = "benchFib|sum"
rc, dom = chromium("--dump-dom", "file://" + svg + "?s=" + regex)
m = re.search(r'id="matched"[^>]*>Matched: ([0-9.]+)% \((\d+) samples', dom)
check(m is not None, "the search ran and printed its share")
folded = subprocess.run([VMP, "flame", "--thread-root", "--state", "sim.vmp"],
                        stdout=subprocess.PIPE, check=True).stdout.decode()
total = hit = 0
for line in folded.splitlines():
    stack, count = line.rsplit(" ", 1)
    total += int(count)
    if any(re.search(regex, f) for f in stack.split(";")):
        hit += int(count)
check(hit > 0, "the regex matches something")
if m:
    check(int(m.group(2)) == hit, "matched samples %s == %d (each stack once)" % (m.group(2), hit))
    check(abs(float(m.group(1)) - 100.0 * hit / total) < 0.006, "matched share")
check(dom.count('fill="rgb(230,0,230)"') > 0, "matches highlighted")

# 3. Zoom and reset: a copy of the SVG with one more script that clicks the
#    widest frame of depth 2, records what the page shows, clicks "Reset Zoom"
#    and records again (scripts run in document order, after the SVG's own).
probe = """<script type="text/ecmascript"><![CDATA[
(function () {
  var svg = document.documentElement, gs = svg.getElementsByTagName("g"), best = null, i;
  function frames() {
    var r = [];
    for (var j = 0; j < gs.length; j++) if (gs[j].getAttribute("class") === "f") r.push(gs[j]);
    return r;
  }
  var fs = frames();
  for (i = 0; i < fs.length; i++)
    if (fs[i].getAttribute("data-d") === "2" &&
        (!best || +fs[i].getAttribute("data-n") > +best.getAttribute("data-n"))) best = fs[i];
  var w0 = best.getElementsByTagName("rect")[0].getAttribute("width");
  best.getElementsByTagName("rect")[0].dispatchEvent(new MouseEvent("click", {bubbles: true}));
  var shown = [], w = best.getElementsByTagName("rect")[0].getAttribute("width");
  for (i = 0; i < fs.length; i++) if (fs[i].style.display !== "none") shown.push(i);
  var label = best.getElementsByTagName("text")[0].textContent;
  document.getElementById("reset").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  var hidden = 0;
  for (i = 0; i < fs.length; i++) if (fs[i].style.display === "none") hidden++;
  svg.setAttribute("data-probe", [fs.indexOf(best), w0, w, shown.join(","), label,
      best.getElementsByTagName("rect")[0].getAttribute("width"), hidden].join("|"));
})();
]]></script>
</svg>
"""
text = open(svg, encoding="utf-8").read()
probe_svg = os.path.abspath("probe.svg")
open(probe_svg, "w", encoding="utf-8").write(text[:text.rindex("</svg>")] + probe)
rc, dom = chromium("--dump-dom", "file://" + probe_svg)
m = re.search(r'data-probe="([^"]*)"', dom)
check(m is not None, "the zoom probe ran")
if m:
    idx, w0, w, shown, label, w_after, hidden = m.group(1).split("|")
    geo = [(int(s), int(n), int(d)) for s, n, d in
           re.findall(r'<g class="f" data-s="(\d+)" data-n="(\d+)" data-d="(\d+)"', text)]
    zs, zn, zd = geo[int(idx)]
    want = [i for i, (s, n, d) in enumerate(geo)
            if (d < zd and s <= zs and s + n >= zs + zn) or
            (d >= zd and s >= zs and s + n <= zs + zn and (d > zd or i == int(idx)))]
    check(float(w) == 1180.0, "zoomed frame spans the width (%s)" % w)
    check(shown == ",".join(map(str, want)), "zoom shows the frame, its ancestors and callees")
    check(len(want) < len(geo), "zoom hides the rest")
    check(len(label) > 3, "zoomed frame labelled (%r)" % label)
    check(w_after == w0 and hidden == "0", "reset zoom restores the graph")

# 4. The differential flame graph of repeated runs (`vmp diff BASE... --
#    NEW... -o FILE.svg`) renders: grey frames, and the significantly slowed
#    function in red.
target = "String>>sortBlock"
runs = []
for side, extra in (("a", []), ("b", ["--slow", target + ":60"])):
    for k in (1, 2, 3):
        name = "run-%s%d.vmp" % (side, k)
        subprocess.run([SIMVM, "--seed", "1", "--stacks", "20", "--run-seed",
                        str(k + (10 if side == "b" else 0)), "--samples", "20000", "-o", name,
                        *extra], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        runs.append(name)
dsvg = os.path.abspath("diff.svg")
rc = subprocess.run([VMP, "diff", "-o", dsvg, *runs[:3], "--", *runs[3:]]).returncode
check(rc == 0, "vmp diff BASE... -- NEW... -o diff.svg")
dpng = os.path.abspath("diff.png")
rc, _ = chromium("--screenshot=" + dpng, "--window-size=1200,800", "file://" + dsvg)
check(rc == 0 and os.path.exists(dpng), "chromium wrote a screenshot of the diff")
if os.path.exists(dpng):
    w, h, rows = png_pixels(dpng)
    reds = greys = 0
    for row in rows:
        for r, g, b in row:
            if r > 180 and g < 140 and b < 140:
                reds += 1
            elif abs(r - g) < 8 and abs(g - b) < 8 and 120 < r < 235:
                greys += 1
    check(reds > 500, "the slowed function is drawn red: %d pixels" % reds)
    check(greys > 2000, "unchanged functions are grey: %d pixels" % greys)

print("browser: %d failures" % len(failures))
sys.exit(1 if failures else 0)
