// Hand-written SVG charts for the workshop page: a line/step chart with axes and a legend, a
// stacked bar, and the allocator's regions. No library: the figures are few and simple, and
// the page must work with no network, so nothing is loaded from anywhere.
"use strict";

// Okabe–Ito palette (as report's figures), readable by colour-blind viewers.
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"];

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function fmtBytes(b) {
  const a = Math.abs(b);
  if (a >= 2 ** 30) return (b / 2 ** 30).toPrecision(4) + " GiB";
  if (a >= 2 ** 20) return (b / 2 ** 20).toPrecision(4) + " MiB";
  if (a >= 2 ** 10) return (b / 2 ** 10).toPrecision(4) + " KiB";
  return b + " B";
}

// fmtTickBytes is fmtBytes for axis ticks, which sit at round values: no trailing zeros.
function fmtTickBytes(b) {
  for (const [u, n] of [[2 ** 30, "GiB"], [2 ** 20, "MiB"], [2 ** 10, "KiB"]]) {
    if (Math.abs(b) >= u) return +(b / u).toPrecision(4) + " " + n;
  }
  return b + " B";
}

function fmtSeconds(s) {
  const a = Math.abs(s);
  if (a === 0) return "0 s";
  if (a >= 1) return s.toPrecision(4) + " s";
  if (a >= 1e-3) return (s * 1e3).toPrecision(4) + " ms";
  return (s * 1e6).toPrecision(4) + " µs";
}

function fmtPct(x) { return (100 * x).toFixed(1) + "%"; }

// niceTicks returns about n round tick values covering [lo, hi].
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
  return out;
}

// byteTicks are ticks at round binary units (GiB or MiB).
function byteTicks(hi, n) {
  const unit = hi >= 2 ** 31 ? 2 ** 30 : hi >= 2 ** 21 ? 2 ** 20 : 2 ** 10;
  return niceTicks(0, hi / unit, n).map(v => v * unit);
}

// lineChart draws series of [x, y] points. opts: {title, xLabel, yLabel, xFmt, yFmt, yMax,
// bytes (y ticks in binary units), series: [{name, points, step, dash, color, width}],
// hlines: [{y, name, dash}], marks: [{x, y, name}] (a cross, e.g. an OOM)}.
function lineChart(opts) {
  const W = 560, L = 70, R = 12, B = 42;
  // Legend rows above the plot: as many as the entries need.
  const names = [...opts.series.map(x => x.name), ...(opts.hlines || []).map(h => h.offName || h.name), ...(opts.marks || []).map(m => m.name)];
  let rows = 1, used = L + 8;
  names.forEach(n => { const w = 28 + 6.2 * n.length; if (used + w > W && used > L + 8) { rows++; used = L + 8; } used += w; });
  const T = 26 + 14 * rows, H = 214 + 14 * rows;
  const all = opts.series.flatMap(s => s.points);
  const xs = all.map(p => p[0]);
  let xMin = Math.min(0, ...xs), xMax = Math.max(...xs, 0);
  (opts.marks || []).forEach(m => { xMax = Math.max(xMax, m.x); });
  if (!(xMax > xMin)) xMax = xMin + 1;
  // A limit far above the data (growth on a big card) would flatten it: such a line is named
  // in the legend instead of drawn.
  const dataMax = Math.max(...all.map(p => p[1]), ...(opts.marks || []).map(m => m.y), 0);
  const hl = (opts.hlines || []).filter(h => !(h.soft && dataMax > 0 && h.y > 1.6 * dataMax));
  const offScale = (opts.hlines || []).filter(h => !hl.includes(h));
  let yMax = opts.yMax || Math.max(dataMax, ...hl.map(h => h.y), 0);
  if (!(yMax > 0)) yMax = 1;
  yMax *= 1.05;
  const X = x => L + (x - xMin) / (xMax - xMin) * (W - L - R);
  const Y = y => H - B - y / yMax * (H - T - B);
  const xFmt = opts.xFmt || (v => String(+v.toPrecision(3)));
  const yFmt = opts.bytes ? fmtTickBytes : opts.yFmt || (v => String(+v.toPrecision(3)));
  let s = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(opts.title)}"><title>${esc(opts.title)}</title>`;
  s += `<text class="ctitle" x="${L}" y="16">${esc(opts.title)}</text>`;
  const yt = opts.bytes ? byteTicks(yMax, 4) : niceTicks(0, yMax, 4);
  yt.forEach(v => {
    s += `<line class="grid" x1="${L}" x2="${W - R}" y1="${Y(v)}" y2="${Y(v)}"/>`;
    s += `<text class="tick" x="${L - 4}" y="${Y(v) + 3}" text-anchor="end">${esc(yFmt(v))}</text>`;
  });
  niceTicks(xMin, xMax, 5).filter(v => !opts.xInt || Number.isInteger(v)).forEach(v => {
    s += `<text class="tick" x="${X(v)}" y="${H - B + 14}" text-anchor="middle">${esc(xFmt(v))}</text>`;
  });
  s += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/><line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/>`;
  s += `<text class="alabel" x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">${esc(opts.xLabel)}</text>`;
  s += `<text class="alabel" transform="translate(10 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(opts.yLabel)}</text>`;
  const legend = [];
  opts.series.forEach((ser, i) => {
    const c = ser.color || PALETTE[i % PALETTE.length];
    let d = "";
    ser.points.forEach((p, k) => {
      if (k === 0) d += `M${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`;
      else if (ser.step) d += `H${X(p[0]).toFixed(1)}V${Y(p[1]).toFixed(1)}`;
      else d += `L${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`;
    });
    if (ser.step && ser.points.length) d += `H${X(xMax).toFixed(1)}`;
    s += `<path d="${d}" fill="none" stroke="${c}" stroke-width="${ser.width || 1.6}" ${ser.dash ? `stroke-dasharray="${ser.dash}"` : ""}/>`;
    legend.push({ name: ser.name, c, dash: ser.dash });
  });
  hl.forEach(h => {
    const c = h.color || "#555";
    s += `<line x1="${L}" x2="${W - R}" y1="${Y(h.y)}" y2="${Y(h.y)}" stroke="${c}" stroke-dasharray="${h.dash || "6 3"}"/>`;
    legend.push({ name: h.name, c, dash: h.dash || "6 3" });
  });
  (opts.marks || []).forEach(m => {
    const x = X(m.x), y = Y(m.y);
    s += `<path class="mark" d="M${x - 6},${y - 6}L${x + 6},${y + 6}M${x - 6},${y + 6}L${x + 6},${y - 6}" stroke="#D55E00" stroke-width="2.5"/>`;
    legend.push({ name: m.name, c: "#D55E00", cross: true });
  });
  offScale.forEach(h => legend.push({ name: h.offName || h.name, c: h.color || "#555", dash: h.dash || "6 3" }));
  let lx = L + 8, y = 30;
  legend.forEach(g => {
    const w = 28 + 6.2 * g.name.length;
    if (lx + w > W && lx > L + 8) { lx = L + 8; y += 14; }
    if (g.cross) s += `<path d="M${lx},${y - 4}L${lx + 8},${y + 4}M${lx},${y + 4}L${lx + 8},${y - 4}" stroke="${g.c}" stroke-width="2"/>`;
    else s += `<line x1="${lx}" x2="${lx + 16}" y1="${y}" y2="${y}" stroke="${g.c}" stroke-width="2" ${g.dash ? `stroke-dasharray="${g.dash}"` : ""}/>`;
    s += `<text class="legend" x="${lx + 20}" y="${y + 4}">${esc(g.name)}</text>`;
    lx += w;
  });
  return s + "</svg>";
}

// stackedBar draws one horizontal bar split into parts [{name, value}] with a legend.
function stackedBar(title, parts, fmt) {
  const W = 560, L = 10, R = 10;
  const total = parts.reduce((a, p) => a + p.value, 0) || 1;
  const legend = parts.map((p, i) => ({ name: `${p.name} ${fmt(p.value)} (${fmtPct(p.value / total)})`, c: PALETTE[i % PALETTE.length] }));
  let rows = 1, used = L;
  legend.forEach(g => { const w = 22 + 6.2 * g.name.length; if (used + w > W && used > L) { rows++; used = L; } used += w; });
  const H = 70 + 16 * rows;
  let s = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}"><title>${esc(title)}</title>`;
  s += `<text class="ctitle" x="${L}" y="16">${esc(title)}</text>`;
  let x = L;
  parts.forEach((p, i) => {
    const w = p.value / total * (W - L - R);
    s += `<rect x="${x.toFixed(1)}" y="26" width="${Math.max(w, 0).toFixed(1)}" height="30" fill="${legend[i].c}"><title>${esc(p.name)}: ${esc(fmt(p.value))}</title></rect>`;
    if (w > 60) s += `<text class="inbar" x="${(x + w / 2).toFixed(1)}" y="45" text-anchor="middle">${esc(fmt(p.value))}</text>`;
    x += w;
  });
  let lx = L, ly = 76;
  legend.forEach(g => {
    const w = 22 + 6.2 * g.name.length;
    if (lx + w > W && lx > L) { lx = L; ly += 16; }
    s += `<rect x="${lx}" y="${ly - 8}" width="10" height="10" fill="${g.c}"/><text class="legend" x="${lx + 14}" y="${ly + 1}">${esc(g.name)}</text>`;
    lx += w;
  });
  return s + "</svg>";
}

// regionsChart draws the allocator's regions at an OOM, one row per region (each scaled to
// the row), chunks in use blue, free orange.
function regionsChart(reg) {
  const rows = reg.regions;
  const W = 560, L = 150, R = 10, T = 26, RH = 14, GAP = 4;
  const H = T + rows.length * (RH + GAP) + 30;
  let s = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="allocator regions at the OOM"><title>allocator regions at the OOM</title>`;
  s += `<text class="ctitle" x="10" y="16">Regions at the OOM: ${rows.length}, ${esc(fmtBytes(reg.free))} free, largest free chunk ${esc(fmtBytes(reg.largest_free))}</text>`;
  rows.forEach((r, i) => {
    const y = T + i * (RH + GAP);
    const inUse = r.chunks.filter(c => c.in_use).reduce((a, c) => a + c.size, 0);
    s += `<text class="tick" x="${L - 6}" y="${y + RH - 3}" text-anchor="end">${esc(fmtBytes(r.size))}, ${r.chunks.length} chunks</text>`;
    let x = L;
    const scale = (W - L - R) / r.size;
    // Adjacent chunks in the same state are drawn as one rectangle with ticks between them.
    let k = 0;
    while (k < r.chunks.length) {
      let j = k, sz = 0;
      while (j < r.chunks.length && r.chunks[j].in_use === r.chunks[k].in_use) { sz += r.chunks[j].size; j++; }
      const w = sz * scale;
      s += `<rect class="${r.chunks[k].in_use ? "inuse" : "free"}" x="${x.toFixed(2)}" y="${y}" width="${Math.max(w, 0.8).toFixed(2)}" height="${RH}"><title>${j - k} chunk(s) ${r.chunks[k].in_use ? "in use" : "free"}: ${esc(fmtBytes(sz))}</title></rect>`;
      x += w;
      k = j;
    }
    s += `<title>region ${i}: ${esc(fmtBytes(r.size))}, ${esc(fmtBytes(inUse))} in use</title>`;
  });
  const ly = H - 10;
  s += `<rect class="inuse" x="${L}" y="${ly - 9}" width="10" height="10"/><text class="legend" x="${L + 14}" y="${ly}">chunks in use</text>`;
  s += `<rect class="free" x="${L + 110}" y="${ly - 9}" width="10" height="10"/><text class="legend" x="${L + 124}" y="${ly}">free chunks</text>`;
  return s + "</svg>";
}
