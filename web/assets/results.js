// The workshop page's results: one side's summary, figures and diagnosis, and in compare mode
// the change from A to B. In compare mode the two sides' charts share their axes (time over
// the run, bytes, steps), so a longer run or a fuller card reads as a longer line or a taller
// curve, not as the same picture with other tick labels.
"use strict";

function row(name, value, cls) {
  return el("tr", { class: cls || "" }, el("th", { text: name }), el("td", { text: value }));
}

// BAND_COLORS mark other processes' memory, apart from this process's lines.
const BAND_COLORS = [PALETTE[5], PALETTE[4], PALETTE[7]];

function fmtRate(x) { return x.toPrecision(4) + " samples/s"; }

// ivText is a figure's 80% prediction interval as the page shows it after the figure,
// " (80%: LOW–HIGH)", each end in fmt; "" where the answer carries none (an OOM, or no
// validation rows like the run). The low end drops a unit both ends share, as gpusim run
// prints them: "89.20 ms (80%: 82.27–111.6 ms)".
function ivText(iv, fmt) {
  if (!iv) return "";
  let lo = fmt(iv[0]), hi = fmt(iv[1]);
  const unit = s => s.replace(/^[-+0-9.,e]+/, "");
  if (unit(lo) && unit(lo) === unit(hi)) lo = lo.slice(0, lo.length - unit(lo).length);
  return ` (80%: ${lo}–${hi})`;
}

// fmtCount is a rate as a workshop audience reads it: thousands separated, no exponent.
function fmtCount(x) { return x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toPrecision(3); }

// runThroughput is the answer's throughput over the whole run (gpusim run's "throughput
// (run)"): the median step's leaves XLA's compiles and a slow start out.
function runThroughput(body) { return body.run_throughput_samples_per_s || 0; }

// headline is the line at the top of a side, above its controls: what a class reads first.
function headline(body) {
  const r = body.result;
  const trained = r.steps_completed > 0;
  const d0 = r.devices.find(d => !d.idle) || r.devices[0];
  const chip = (cls, label, value) => el("span", { class: "chip " + cls }, el("span", { class: "chip-label", text: label }), el("b", { text: value }));
  const out = el("div", { class: "headline" },
    chip(r.oom ? "h-result bad" : "h-result good", "result", r.oom ? `OOM in step ${(r.oom_detail || {}).step}` : "ok"),
    chip("h-throughput", "throughput (run)", trained ? fmtRate(runThroughput(body)) : "-"),
    chip("h-util", "GPU busy", trained ? fmtPct(r.gpu_utilization) : "-"));
  if (d0) out.append(chip("h-peak", "peak memory", `${fmtBytes(d0.peak_bytes_in_use)} of ${fmtBytes(d0.bytes_limit)}`));
  if (r.xla_compiles && r.simulated_time_s > 0) out.append(chip("h-compile", "XLA compiling", fmtPct(r.xla_compile_time_s / r.simulated_time_s) + " of the run"));
  return out;
}

function summaryTable(body) {
  const r = body.result;
  const trained = r.steps_completed > 0;
  const d0 = r.devices.find(d => !d.idle) || r.devices[0];
  const t = el("table", { class: "summary" });
  t.append(row("result", r.oom ? "OOM" : "ok", r.oom ? "metric-result bad" : "metric-result good"));
  t.append(row("steps", `${r.steps_completed} of ${r.steps}`));
  t.append(row("model, GPU", `${r.model} batch ${r.global_batch} on ${r.replicas} x ${r.gpu}, ${r.precision}`));
  t.append(row("median step", trained ? fmtSeconds(r.step_time_s) + ivText(r.step_time_s_interval, fmtSeconds) : "-", "metric-step"));
  const whole = runThroughput(body);
  const why = r.xla_compiles ? `, ${r.xla_compiles} XLA compile(s) included` : "";
  t.append(row("throughput (run)", trained ? `${fmtRate(whole)} over the whole ${fmtSeconds(r.simulated_time_s)}${why}` : "-", "metric-run-throughput"));
  t.append(row("throughput (median step)", trained ? `${fmtCount(r.throughput_samples_per_s)} samples/s${ivText(r.throughput_samples_per_s_interval, fmtCount)}` : "-", "metric-throughput"));
  t.append(row("GPU utilization", trained ? fmtPct(r.gpu_utilization) : "- (no step completed)", "metric-util"));
  t.append(row("input stall", trained ? fmtPct(r.input_stall_fraction) : "-", "metric-stall"));
  if (d0) {
    t.append(row("peak memory in use", `${fmtBytes(d0.peak_bytes_in_use)}${ivText(d0.peak_bytes_in_use_interval, fmtBytes)} of ${fmtBytes(d0.bytes_limit)} limit (${d0.name.replace(/^.*\/(device:)?/, "")})`, "metric-peak"));
    t.append(row("pool (reserved)", `${fmtBytes(d0.peak_pool_bytes)} in ${d0.pool_growth.length} region(s)`));
  }
  if (r.replicas > 1) {
    t.append(row("all-reduce", fmtSeconds(r.allreduce_time_s)));
    t.append(row("scaling efficiency", fmtPct(r.scaling_efficiency)));
  }
  if (r.xla_compiles) t.append(row("XLA compiles", `${r.xla_compiles} taking ${fmtSeconds(r.xla_compile_time_s)}`, "metric-compile"));
  if (r.skipped_steps) t.append(row("skipped steps (loss scale)", String(r.skipped_steps)));
  if (trained && r.step_time_s_interval) {
    // What "80%" means, said once under the figures that carry it.
    t.append(el("tr", { class: "interval-note" }, el("td", { colspan: "2",
      text: `80%: the range that held the real figure in 80% of the validation runs like this one (${r.interval_basis})` })));
  }
  return t;
}

function renderResults(side, body) {
  const r = body.result;
  const root = $("#side-" + side);
  const head = $(".headline-slot", root);
  head.innerHTML = "";
  head.append(headline(body));
  const out = $(".results", root);
  out.classList.remove("stale");
  out.innerHTML = "";
  // The summary and the OOM share the grid's first cell; the figures follow it, beside it
  // where the side is wide enough.
  const first = el("div", { class: "summary-cell" }, summaryTable(body));
  out.append(first);
  if (r.oom) {
    const o = r.oom_detail || {};
    first.append(el("div", { class: "oom" },
      el("h3", { text: `Out of memory in step ${o.step}${o.op ? " at " + o.op : ""}` }),
      el("pre", { class: "oom-message", text: r.oom_message }),
      el("p", { text: `requested ${fmtBytes(o.request_bytes)} on ${o.device} (${o.allocator}); fragmentation at the OOM ${fmtPct(o.fragmentation || 0)} (free bytes outside the largest free chunk)` })));
  }
  // Other processes are drawn on the memory chart; one that failed to start is said here.
  const msgs = [...(r.warnings || []).map(w => ["warning", w]), ...(r.notes || []).map(n => ["note", n])];
  (r.processes || []).filter(p => p.error).forEach(p => msgs.push(["note", `process ${p.name}: ${p.error}`]));
  if (msgs.length) out.append(el("ul", { class: "notes" }, msgs.map(([k, m]) => el("li", { class: k, text: `${k}: ${m}` }))));
  out.append(el("div", { class: "figures" }));
  if (r.diagnosis) out.append(diagnosisBox(side, r.diagnosis));
  if (r.device_table && r.device_table.length) out.append(...deviceTable(r));
  out.append(el("details", { class: "tf-code", open: "" }, el("summary", { text: "The TensorFlow program this simulates" }), el("pre", { text: body.tf_code })));
  out.append(el("details", { class: "yaml" }, el("summary", { text: "The scenario as YAML" }), el("pre", { text: body.yaml })));
}

function diagnosisBox(side, dg) {
  const box = el("div", { class: "diagnosis" }, el("h3", { text: "Diagnosis: " + dg.bound }),
    el("ul", {}, (dg.evidence || []).map(e => el("li", { text: e }))));
  if (!dg.remedies || !dg.remedies.length) return box;
  const tb = el("table", { class: "remedies" },
    el("colgroup", {}, ["c-n", "c-change", "c-tp", "c-gain", "c-util", "c-try"].map(c => el("col", { class: c }))),
    el("tr", {}, ["#", "change (re-simulated)", "throughput (run)", "gain", "GPU busy", ""].map(h => el("th", { text: h }))));
  dg.remedies.forEach((m, i) => {
    tb.append(el("tr", { class: i === 0 ? "best" : "" },
      el("td", { text: String(i + 1) }), el("td", {}, m.change, el("br"), el("code", { text: m.set.map(s => "--set " + s).join(" ") })),
      el("td", { text: m.oom ? "OOM" : m.run_throughput_samples_per_s.toPrecision(4) + "/s" }),
      el("td", { text: m.oom ? "-" : (m.gain >= 0 ? "+" : "") + fmtPct(m.gain) }),
      el("td", { text: m.oom ? "-" : fmtPct(m.gpu_utilization) }),
      el("td", {}, el("button", { type: "button", class: "apply-remedy", onclick: () => applyRemedy(side, m.set) }, side === "a" ? "try as B" : "apply"))));
  });
  box.append(el("p", { text: "Remedies, best first:" }), tb);
  return box;
}

function deviceTable(r) {
  const tb = el("table", { class: "devices" }, el("tr", {}, ["nvidia-smi", "CUDA", "TF device", "status", "used (nvidia-smi)"].map(h => el("th", { text: h }))));
  r.device_table.forEach(d => {
    const ph = (r.physical_gpus || []).find(p => p.index === d.nvidia_smi);
    tb.append(el("tr", {}, el("td", { text: "GPU " + d.nvidia_smi }), el("td", { text: d.cuda_ordinal >= 0 ? String(d.cuda_ordinal) : "-" }),
      el("td", { text: d.tf_device || "-" }), el("td", { text: d.status }),
      el("td", { text: ph ? `${fmtBytes(ph.used_bytes)} of ${fmtBytes(ph.total_bytes)}` : "" })));
  });
  return [el("h3", { text: "Devices (nvidia-smi numbering vs TF's)" }), tb];
}

// --- figures ------------------------------------------------------------------------------

// figureSpecs lists a side's figures: line charts with the keys of the axes they may share
// with the other side (x: xKey, y: yKey), bars with the key of their scale, and the regions.
function figureSpecs(body) {
  const r = body.result;
  const specs = [];
  const mem = memoryRunSpec(body);
  if (mem) specs.push(mem);
  const d0 = r.devices.find(d => !d.idle) || r.devices[0];
  const limitLine = d => ({ y: d.bytes_limit, name: "limit", soft: true, offName: `limit ${fmtBytes(d.bytes_limit)} (above the scale)` });
  if (d0 && d0.step_memory_profile.length) {
    specs.push({ cls: "chart-memory-step", xKey: "step-time", yKey: "step-bytes", opts: { title: `Memory within step ${d0.step_memory_profile_step}`, xLabel: "time in the step (ms)", yLabel: "bytes", bytes: true,
      xFmt: v => String(+(v * 1e3).toPrecision(3)),
      series: [{ name: "in use (max)", points: d0.step_memory_profile.map(p => [p.time_s, p.max_bytes_in_use]), step: true },
        { name: "pool", points: d0.step_memory_profile.map(p => [p.time_s, p.pool_bytes]), step: true, dash: "5 3" }],
      hlines: [limitLine(d0)] } });
  }
  if (d0 && d0.pool_growth.length > 1) {
    const g = d0.pool_growth;
    specs.push({ cls: "chart-pool", xKey: "pool-n", yKey: "pool-bytes", opts: { title: `Pool growth: ${g.length} regions${d0.pool_growth_dropped ? ` (+${d0.pool_growth_dropped} not shown)` : ""}`,
      xLabel: "growth of the pool (n-th region taken from the GPU)", yLabel: "bytes", bytes: true, xFmt: v => String(v), xInt: true,
      series: [{ name: "pool size", points: g.map((c, i) => [i + 1, c.pool_bytes]) },
        { name: "region added", points: g.map((c, i) => [i + 1, c.region_bytes]), color: PALETTE[1] }],
      hlines: [limitLine(d0)] }, caption: "regions: " + g.slice(0, 16).map(c => fmtBytes(c.region_bytes)).join(", ") + (g.length > 16 ? ", …" : "") });
  }
  const card = cardSpec(body);
  if (card) specs.push(card);
  if (body.regions) specs.push({ cls: "chart-regions", regions: body.regions, request: (r.oom_detail || {}).request_bytes || 0,
    caption: "TF's RenderOccupancy of the same pool (* in use, x asked for by nobody, _ free): " + (body.regions.occupancy || "") });
  const trained = r.steps_completed > 0;
  // Utilization over time as nvidia-smi samples it (200 ms windows), on the memory chart's
  // time axis.
  const us = (r.gpu_utilization_samples || []).filter(u => u.samples.length >= 2);
  if (trained && us.length) {
    specs.push({ cls: "chart-util", xKey: "run-time", opts: { title: "GPU utilization over time (nvidia-smi samples)", xLabel: "time (s)", yLabel: "utilization (%)", yMax: 100,
      series: us.slice(0, 4).map((u, i) => ({ name: "GPU:" + u.device, points: u.samples.map((v, k) => [k * u.period_s, 100 * v]), color: PALETTE[(2 * i) % 8] })),
      hlines: [{ y: 100 * r.gpu_utilization, name: `mean ${fmtPct(r.gpu_utilization)}`, color: PALETTE[3] }] } });
  }
  specs.push(...runTimeSpecs(body));
  const parts = (r.breakdown || []).filter(p => p.seconds > 0).map(p => ({ name: p.category, value: p.seconds }));
  if (parts.length) specs.push({ cls: "chart-breakdown", bar: { title: `The median step (${fmtSeconds(r.step_time_s)}) by category`, parts, fmt: fmtSeconds }, scaleKey: "step" });
  const kinds = (r.breakdown_by_kind || []).filter(p => p.seconds > 0).map(p => ({ name: p.category, value: p.seconds }));
  if (kinds.length) specs.push({ cls: "chart-kinds", bar: { title: "The same step by op kind", parts: kinds, fmt: fmtSeconds }, scaleKey: "step" });
  // The figure that tells the run's story comes first: memory at an OOM, the compile time
  // where XLA recompiles, utilization where the GPU waits.
  // Comparing, both sides take the order either side's story asks for, so that the same
  // figures stand side by side.
  const told = state.compare ? [state.last.a, state.last.b].filter(Boolean).map(x => x.result) : [r];
  let first = [];
  if (told.some(x => x.oom)) first = ["chart-memory-run", "chart-card", "chart-regions"];
  else if (told.some(x => x.xla_compiles > 0)) first = ["chart-compile", "chart-steps"];
  else if (told.some(x => x.diagnosis && x.diagnosis.low_utilization)) first = ["chart-util"];
  const rank = sp => { const i = first.indexOf(sp.cls); return i < 0 ? first.length : i; };
  return specs.map((sp, i) => [sp, i]).sort((x, y) => rank(x[0]) - rank(y[0]) || x[1] - y[1]).map(x => x[0]);
}

// runTimeSpecs picture where a run's time went when the median step does not tell it (XLA
// compiling, a slow first epoch): each step's time, and the run split into compiling and the
// steps themselves.
function runTimeSpecs(body) {
  const r = body.result;
  const st = r.step_times_s || [];
  const whole = runThroughput(body);
  const differs = r.throughput_samples_per_s > 0 && Math.abs(whole / r.throughput_samples_per_s - 1) > 0.1;
  if (st.length < 2 || !(r.xla_compiles > 0 || differs)) return [];
  const out = [{ cls: "chart-steps", xKey: "steps", yKey: "step-s", opts: { title: `Each step's time (${st.length} steps)`, xLabel: "step", yLabel: "seconds", xInt: true,
    yFmt: v => v === 0 ? "0 s" : v >= 1 ? +v.toPrecision(3) + " s" : +(v * 1e3).toPrecision(3) + " ms", xFmt: v => String(v),
    series: [{ name: "step time", points: st.map((t, i) => [i + 1, t]), step: true, ends: true }],
    hlines: [{ y: r.step_time_s, name: `median ${fmtSeconds(r.step_time_s)}`, color: PALETTE[2] }] } }];
  if (r.xla_compiles > 0) {
    const total = r.simulated_time_s;
    out.push({ cls: "chart-compile", bar: { title: `The run's ${fmtSeconds(total)}: ${r.xla_compiles} XLA compiles and the steps`,
      parts: [{ name: `XLA compile (${r.xla_compiles}x)`, value: r.xla_compile_time_s }, { name: "the steps themselves", value: Math.max(total - r.xla_compile_time_s, 0) }], fmt: fmtSeconds }, scaleKey: "run" });
  }
  return out;
}

// cardSpec splits the first GPU's card among the processes on it when others share it: each
// other process's pool, the training process's, what else nvidia-smi counts as used (CUDA
// contexts, the driver's reserve) and what is free, to the card's scale.
function cardSpec(body) {
  const r = body.result;
  const d0 = r.devices.find(d => !d.idle) || r.devices[0];
  const mine = d0 ? (body.shares || []).filter(s => s.gpu === d0.physical_gpu) : [];
  const card = d0 && (r.physical_gpus || []).find(p => p.index === d0.physical_gpu);
  if (!card || !mine.length) return null;
  const others = mine.reduce((a, s) => a + s.bytes, 0);
  // The memory chart's colours: the bands' for the other processes, the in-use line's for
  // this one.
  const parts = mine.map((s, i) => ({ name: `${s.name}'s pool`, value: s.bytes, color: BAND_COLORS[i % BAND_COLORS.length] }));
  parts.push({ name: "this process's pool", value: d0.pool_bytes, color: PALETTE[0] });
  parts.push({ name: "CUDA contexts, driver", value: Math.max(card.used_bytes - others - d0.pool_bytes, 0), color: "#888" });
  parts.push({ name: "free", value: Math.max(card.total_bytes - card.used_bytes, 0), color: PALETTE[1] });
  return { cls: "chart-card", bar: { title: `GPU ${card.index} (${fmtBytes(card.total_bytes)}) process by process, as nvidia-smi counts it`, parts, fmt: fmtBytes }, scaleKey: "card" };
}

// memoryRunSpec is memory over the run: each GPU's bytes in use and pool; the OOM on the curve,
// at the moment the allocation was asked for, with the request drawn above it; and every other
// process's pool as a band at the top of the card.
function memoryRunSpec(body) {
  const r = body.result;
  const devs = r.devices.filter(d => !d.idle).slice(0, 4);
  if (!devs.length || !devs[0].memory_timeline.length) return null;
  const o = r.oom ? r.oom_detail : null;
  const oomDev = o ? devs.find(d => d.name === o.device) || devs[0] : null;
  const tReq = o ? o.time_s - (body.oom_wait_s || 0) : 0;
  const series = [], marks = [];
  devs.forEach((d, i) => {
    const n = devs.length > 1 ? " " + d.name.replace(/^.*\/(device:)?/, "") : "";
    const tl = d.memory_timeline, last = tl[tl.length - 1];
    const inUse = tl.map(p => [p.time_s, p.max_bytes_in_use]), pool = tl.map(p => [p.time_s, p.pool_bytes]);
    if (d === oomDev && tReq >= last.time_s) {
      // The curve ends where the failed request was made: in use at that moment (the dump's
      // chunks in use), the request drawn on top of it.
      const at = body.regions ? body.regions.in_use : last.bytes_in_use;
      inUse.push([tReq, at]);
      pool.push([tReq, last.pool_bytes]);
      marks.push({ x: tReq, y: at, up: o.request_bytes, name: `OOM: ${fmtBytes(o.request_bytes)} asked for at ${fmtBytes(at)} in use` });
    }
    // A line ends with its run: on an axis shared with a longer run it does not go on.
    series.push({ name: "in use (max)" + n, points: inUse, step: true, ends: true, color: PALETTE[(2 * i) % 8] });
    if (i === 0) series.push({ name: "pool" + n, points: pool, step: true, ends: true, dash: "5 3", color: PALETTE[1] });
  });
  const d0 = devs[0];
  const hlines = [{ y: d0.bytes_limit, name: `limit ${fmtBytes(d0.bytes_limit)}`, soft: true, offName: `limit ${fmtBytes(d0.bytes_limit)} (above the scale)` }];
  // Other processes' pools on d0's card, stacked down from the card's top.
  const card = (r.physical_gpus || []).find(p => p.index === d0.physical_gpu);
  const bands = [];
  const mine = (body.shares || []).filter(s => s.gpu === d0.physical_gpu);
  if (card && mine.length) {
    let top = card.total_bytes;
    mine.forEach((s, i) => {
      bands.push({ y0: top - s.bytes, y1: top, name: `${s.name}'s pool ${fmtBytes(s.bytes)} (GPU ${s.gpu})`, color: BAND_COLORS[i % BAND_COLORS.length] });
      top -= s.bytes;
    });
    hlines[0].soft = false;
    hlines.push({ y: card.total_bytes, name: `card ${fmtBytes(card.total_bytes)}`, color: "#000", dash: "2 2" });
  }
  let caption = "";
  if (o) caption = `The allocation was asked for at ${fmtSeconds(tReq)}; TF's BFC allocator then waited ${fmtSeconds(body.oom_wait_s || 0)} for frees (kMaxMillisToWait in bfc_allocator.cc) and failed at ${fmtSeconds(o.time_s)}.`;
  return { cls: "chart-memory-run", xKey: "run-time", yKey: "run-bytes", opts: { title: "Memory over the run", xLabel: "time (s)", yLabel: "bytes", bytes: true, series, hlines, marks, bands }, caption };
}

// sharedDomains is, for each axis key, the largest extent any shown side's charts need.
function sharedDomains(sides) {
  const dom = { x: {}, y: {}, bar: {} };
  sides.forEach(side => {
    const body = state.last[side];
    if (!body) return;
    figureSpecs(body).forEach(sp => {
      if (sp.opts) {
        const d = lineDomain(sp.opts);
        if (sp.xKey) dom.x[sp.xKey] = Math.max(dom.x[sp.xKey] || 0, d.xMax);
        if (sp.yKey) dom.y[sp.yKey] = Math.max(dom.y[sp.yKey] || 0, d.yMax);
      } else if (sp.bar) {
        const t = sp.bar.parts.reduce((a, p) => a + p.value, 0);
        dom.bar[sp.scaleKey] = Math.max(dom.bar[sp.scaleKey] || 0, t);
      }
    });
  });
  return dom;
}

// renderFigures draws a side's figures, on the axes both sides share in compare mode.
function renderFigures(side) {
  const body = state.last[side];
  const figs = $("#side-" + side + " .figures");
  if (!body || !figs) return;
  const dom = sharedDomains(state.compare ? ["a", "b"] : [side]);
  figs.innerHTML = "";
  figureSpecs(body).forEach(sp => {
    let svg;
    if (sp.regions) svg = regionsChart(sp.regions, sp.request);
    else if (sp.bar) svg = stackedBar(sp.bar.title, sp.bar.parts, sp.bar.fmt, dom.bar[sp.scaleKey]);
    else svg = lineChart(Object.assign({}, sp.opts, { xMax: dom.x[sp.xKey], yTop: dom.y[sp.yKey] }));
    figs.append(el("figure", { class: sp.cls, html: svg }, sp.caption ? el("figcaption", { text: sp.caption }) : null));
  });
}

// --- compare mode: B against A ------------------------------------------------------------

// changeMetrics are the change row's metrics: how to read each from an answer, how to show it,
// and which way is better (+1 higher, -1 lower, 0 neither).
const changeMetrics = [
  { key: "throughput", name: "throughput (run)", get: b => b.result.steps_completed > 0 ? runThroughput(b) : null, fmt: v => v.toPrecision(4) + "/s", better: 1 },
  { key: "step", name: "median step", get: b => b.result.steps_completed > 0 ? b.result.step_time_s : null, fmt: fmtSeconds, better: -1 },
  { key: "util", name: "GPU busy", get: b => b.result.steps_completed > 0 ? b.result.gpu_utilization : null, fmt: fmtPct, better: 1, points: true },
  { key: "stall", name: "input stall", get: b => b.result.input ? b.result.input_stall_fraction : null, fmt: fmtPct, better: -1, points: true },
  { key: "peak", name: "peak memory", get: b => { const d = b.result.devices.find(d => !d.idle) || b.result.devices[0]; return d ? d.peak_bytes_in_use : null; }, fmt: fmtBytes, better: 0 },
  { key: "compile", name: "XLA compile", get: b => b.result.xla_compiles ? b.result.xla_compile_time_s : (b.result.steps_completed > 0 ? 0 : null), fmt: fmtSeconds, better: -1, only: b => b.result.xla_compiles > 0 },
];

function renderChange() {
  const box = $("#change-row");
  const a = state.last.a, b = state.last.b;
  const show = state.compare && a && b;
  box.hidden = !show;
  if (!show) return;
  // While a side re-simulates the row shows its last answer, faded.
  box.classList.toggle("stale", $("#side-a").dataset.state !== "done" || $("#side-b").dataset.state !== "done");
  box.innerHTML = "";
  box.append(el("span", { class: "change-title", text: "B against A:" }));
  const res = x => x.result.oom ? "OOM" : "ok";
  box.append(el("span", { class: "chg chg-result " + (res(a) === res(b) ? "same" : res(b) === "ok" ? "good" : "bad") }, "result ", el("b", { text: res(a) === res(b) ? res(a) : `${res(a)} → ${res(b)}` })));
  changeMetrics.forEach(m => {
    if (m.only && !m.only(a) && !m.only(b)) return;
    const va = m.get(a), vb = m.get(b);
    if (va == null || vb == null) return;
    let delta, sign = Math.sign(vb - va);
    if (m.points) delta = `${vb >= va ? "+" : "−"}${Math.abs(100 * (vb - va)).toFixed(1)} pts`;
    else if (va !== 0) delta = `${vb >= va ? "+" : "−"}${Math.abs(100 * (vb / va - 1)).toFixed(1)}%`;
    else delta = vb === 0 ? "±0" : "new";
    if (Math.abs(vb - va) <= 1e-9 * Math.max(Math.abs(va), 1)) { sign = 0; delta = "same"; }
    const cls = sign === 0 || m.better === 0 ? "same" : sign === m.better ? "good" : "bad";
    box.append(el("span", { class: `chg chg-${m.key} ${cls}`, "data-a": String(va), "data-b": String(vb) },
      m.name + " ", el("span", { class: "vals", text: `${m.fmt(va)} → ${m.fmt(vb)}` }), " ", el("b", { text: delta })));
  });
}
