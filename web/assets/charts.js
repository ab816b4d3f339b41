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

// lineDomain is the extent lineChart(opts) draws: x from xMin to xMax, y from 0 to yMax, with
// the horizontal lines it draws (hl) and those it only names (offScale).
function lineDomain(opts) {
  const all = opts.series.flatMap(s => s.points);
  const xs = all.map(p => p[0]);
  let xMin = Math.min(0, ...xs), xMax = Math.max(...xs, 0);
  (opts.marks || []).forEach(m => { xMax = Math.max(xMax, m.x); });
  if (opts.xMax > xMax) xMax = opts.xMax;
  if (!(xMax > xMin)) xMax = xMin + 1;
  // A limit far above the data (growth on a big card) would flatten it: such a line is named
  // in the legend instead of drawn.
  const dataMax = Math.max(...all.map(p => p[1]), ...(opts.marks || []).map(m => m.y + (m.up || 0)), ...(opts.bands || []).map(b => b.y1), 0);
  const hl = (opts.hlines || []).filter(h => !(h.soft && dataMax > 0 && h.y > 1.6 * Math.max(dataMax, (opts.yTop || 0) / 1.05)));
  const offScale = (opts.hlines || []).filter(h => !hl.includes(h));
  let yMax = opts.yMax || Math.max(dataMax, ...hl.map(h => h.y), 0);
  if (!(yMax > 0)) yMax = 1;
  yMax *= 1.05;
  if (opts.yTop > yMax) yMax = opts.yTop;
  return { xMin, xMax, yMax, hl, offScale };
}

// lineChart draws series of [x, y] points. opts: {title, xLabel, yLabel, xFmt, yFmt, yMax,
// bytes (y ticks in binary units), series: [{name, points, step, dash, color, width}],
// hlines: [{y, name, dash}], marks: [{x, y, name, up}] (a cross on the curve, e.g. an OOM,
// with a bar of height up above it: the request that did not fit), bands: [{y0, y1, name,
// color}] (a share of the card held by another process), xMax, yTop (a domain shared with
// the other side's chart)}. The svg carries its domain as data-x-max and data-y-max.
function lineChart(opts) {
  const W = 560, L = 70, R = 12, B = 42;
  // Legend rows above the plot: as many as the entries need.
  const names = [...opts.series.map(x => x.name), ...(opts.hlines || []).map(h => h.offName || h.name), ...(opts.marks || []).map(m => m.name), ...(opts.bands || []).map(b => b.name)];
  let rows = 1, used = L + 8;
  names.forEach(n => { const w = 28 + 6.2 * n.length; if (used + w > W && used > L + 8) { rows++; used = L + 8; } used += w; });
  const T = 26 + 14 * rows, H = 214 + 14 * rows;
  const { xMin, xMax, yMax, hl, offScale } = lineDomain(opts);
  const X = x => L + (x - xMin) / (xMax - xMin) * (W - L - R);
  const Y = y => H - B - y / yMax * (H - T - B);
  const xFmt = opts.xFmt || (v => String(+v.toPrecision(3)));
  const yFmt = opts.bytes ? fmtTickBytes : opts.yFmt || (v => String(+v.toPrecision(3)));
  let s = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(opts.title)}" data-x-max="${xMax}" data-y-max="${yMax}"><title>${esc(opts.title)}</title>`;
  s += `<text class="ctitle" x="${L}" y="16">${esc(opts.title)}</text>`;
  const legend = [];
  (opts.bands || []).forEach((b, i) => {
    const c = b.color || "#999";
    s += `<rect class="band" x="${L}" width="${W - R - L}" y="${Y(b.y1).toFixed(1)}" height="${(Y(b.y0) - Y(b.y1)).toFixed(1)}" fill="${c}" fill-opacity="0.35" stroke="${c}"><title>${esc(b.name)}</title></rect>`;
    if (Y(b.y0) - Y(b.y1) > 13) s += `<text class="bandlabel" x="${(L + W - R) / 2}" y="${((Y(b.y0) + Y(b.y1)) / 2 + 4).toFixed(1)}" text-anchor="middle">${esc(b.name)}</text>`;
    legend.push({ name: b.name, c, box: true });
  });
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
  opts.series.forEach((ser, i) => {
    const c = ser.color || PALETTE[i % PALETTE.length];
    let d = "";
    ser.points.forEach((p, k) => {
      if (k === 0) d += `M${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`;
      else if (ser.step) d += `H${X(p[0]).toFixed(1)}V${Y(p[1]).toFixed(1)}`;
      else d += `L${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`;
    });
    if (ser.step && ser.points.length && !ser.ends) d += `H${X(xMax).toFixed(1)}`;
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
    if (m.up) s += `<line class="request" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${y.toFixed(1)}" y2="${Y(m.y + m.up).toFixed(1)}" stroke="#D55E00" stroke-width="5" stroke-opacity="0.55"/>`;
    s += `<path class="mark" data-x="${x.toFixed(1)}" data-y="${y.toFixed(1)}" d="M${x - 6},${y - 6}L${x + 6},${y + 6}M${x - 6},${y + 6}L${x + 6},${y - 6}" stroke="#D55E00" stroke-width="2.5"/>`;
    legend.push({ name: m.name, c: "#D55E00", cross: true });
  });
  offScale.forEach(h => legend.push({ name: h.offName || h.name, c: h.color || "#555", dash: h.dash || "6 3" }));
  let lx = L + 8, y = 30;
  legend.forEach(g => {
    const w = 28 + 6.2 * g.name.length;
    if (lx + w > W && lx > L + 8) { lx = L + 8; y += 14; }
    if (g.cross) s += `<path d="M${lx},${y - 4}L${lx + 8},${y + 4}M${lx},${y + 4}L${lx + 8},${y - 4}" stroke="${g.c}" stroke-width="2"/>`;
    else if (g.box) s += `<rect x="${lx}" y="${y - 5}" width="16" height="10" fill="${g.c}" fill-opacity="0.35" stroke="${g.c}"/>`;
    else s += `<line x1="${lx}" x2="${lx + 16}" y1="${y}" y2="${y}" stroke="${g.c}" stroke-width="2" ${g.dash ? `stroke-dasharray="${g.dash}"` : ""}/>`;
    s += `<text class="legend" x="${lx + 20}" y="${y + 4}">${esc(g.name)}</text>`;
    lx += w;
  });
  return s + "</svg>";
}

// stackedBar draws one horizontal bar split into parts [{name, value, color}] with a legend; scale,
// when larger than the parts' total, is the full width (the other side's longer bar), so two
// sides' bars compare by length.
function stackedBar(title, parts, fmt, scale) {
  const W = 560, L = 10, R = 10;
  const total = parts.reduce((a, p) => a + p.value, 0) || 1;
  const full = Math.max(total, scale || 0);
  const legend = parts.map((p, i) => ({ name: `${p.name} ${fmt(p.value)} (${fmtPct(p.value / total)})`, c: p.color || PALETTE[i % PALETTE.length] }));
  let rows = 1, used = L;
  legend.forEach(g => { const w = 22 + 6.2 * g.name.length; if (used + w > W && used > L) { rows++; used = L; } used += w; });
  const H = 70 + 16 * rows;
  let s = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}" data-x-max="${full}"><title>${esc(title)}</title>`;
  s += `<text class="ctitle" x="${L}" y="16">${esc(title)}</text>`;
  let x = L;
  parts.forEach((p, i) => {
    const w = p.value / full * (W - L - R);
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

// regionsChart draws the allocator's regions at an OOM to scale: first the whole pool, its
// regions end to end, then one row per region, as long as the region is against the largest.
// A chunk in use is blue up to the bytes it was asked for and red for the rest (rounding, and
// the unsplit tail of the free chunk it was cut from); a free chunk is orange. The request
// that failed is drawn to the same scale, under the largest free chunk, so the gap between
// what is free and what could be served shows.
function regionsChart(reg, request) {
  const rows = reg.regions;
  const W = 560, L = 118, R = 10, T = 44, RH = 13, GAP = 4, PW = W - L - R;
  const pool = reg.in_use + reg.free;
  const biggest = Math.max(...rows.map(r => r.size), 1);
  const H = T + (rows.length + 3) * (RH + GAP) + 34;
  let s = `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="allocator regions at the OOM"><title>allocator regions at the OOM</title>`;
  s += `<text class="ctitle" x="10" y="16">Regions at the OOM: ${rows.length}, ${esc(fmtBytes(pool))} in all, ${esc(fmtBytes(reg.free))} free</text>`;
  s += `<text class="tick" x="10" y="32">largest free chunk ${esc(fmtBytes(reg.largest_free))}; in chunks in use ${esc(fmtBytes(reg.waste))} is asked for by nobody</text>`;
  // drawChunks draws chunks from x0 at scale px/byte, merging neighbours in the same state.
  const drawChunks = (chunks, x0, y, scale) => {
    let x = x0, out = "";
    const seg = (cls, n, what) => {
      const w = n * scale;
      if (n > 0) out += `<rect class="${cls}" x="${x.toFixed(2)}" y="${y}" width="${Math.max(w, 0.6).toFixed(2)}" height="${RH}"><title>${esc(what)}: ${esc(fmtBytes(n))}</title></rect>`;
      x += w;
    };
    let k = 0;
    while (k < chunks.length) {
      let j = k, used = 0, waste = 0, free = 0;
      while (j < chunks.length && chunks[j].in_use === chunks[k].in_use) {
        const c = chunks[j];
        if (c.in_use) { const q = c.requested || c.size; used += q; waste += c.size - q; } else free += c.size;
        j++;
      }
      if (chunks[k].in_use) { seg("inuse", used, `${j - k} chunk(s) in use, asked for`); seg("waste", waste, "inside them, asked for by nobody"); }
      else seg("free", free, `${j - k} free chunk(s)`);
      k = j;
    }
    return out;
  };
  // The whole pool, regions end to end, separated by white ticks.
  let y = T;
  s += `<text class="tick" x="${L - 6}" y="${y + RH - 3}" text-anchor="end">pool ${esc(fmtBytes(pool))}</text>`;
  let x = L;
  rows.forEach(r => {
    s += drawChunks(r.chunks, x, y, PW / pool);
    x += r.size * PW / pool;
    s += `<line x1="${x.toFixed(2)}" x2="${x.toFixed(2)}" y1="${y - 2}" y2="${y + RH + 2}" stroke="#fff" stroke-width="1.5"/>`;
  });
  y += RH + GAP + 8;
  s += `<text class="tick" x="10" y="${y + 6}">each region against the largest (${esc(fmtBytes(biggest))}):</text>`;
  y += 12;
  rows.forEach((r, i) => {
    const yy = y + i * (RH + GAP);
    s += `<text class="tick" x="${L - 6}" y="${yy + RH - 3}" text-anchor="end">${esc(fmtBytes(r.size))}, ${r.chunks.length} ch.</text>`;
    s += `<g class="region" data-size="${r.size}" data-width="${(r.size * PW / biggest).toFixed(2)}">` + drawChunks(r.chunks, L, yy, PW / biggest) + "</g>";
  });
  y += rows.length * (RH + GAP);
  if (request > 0) {
    s += `<text class="tick" x="${L - 6}" y="${y + RH - 3}" text-anchor="end">request ${esc(fmtBytes(request))}</text>`;
    s += `<rect class="request" x="${L}" y="${y}" width="${Math.max(request * PW / biggest, 0.6).toFixed(2)}" height="${RH}"><title>the request that failed: ${esc(fmtBytes(request))}</title></rect>`;
    s += `<rect class="free" x="${L}" y="${y + RH + 2}" width="${Math.max(reg.largest_free * PW / biggest, 0.6).toFixed(2)}" height="5"><title>largest free chunk: ${esc(fmtBytes(reg.largest_free))}</title></rect>`;
  }
  const ly = H - 8;
  let lx = 10;
  [["inuse", "in use (asked for)"], ["waste", "in use, asked for by nobody"], ["free", "free"], ["request", "the failed request"]].forEach(([c, n]) => {
    s += `<rect class="${c}" x="${lx}" y="${ly - 9}" width="10" height="10"/><text class="legend" x="${lx + 14}" y="${ly}">${n}</text>`;
    lx += 30 + 5.6 * n.length;
  });
  return s + "</svg>";
}
