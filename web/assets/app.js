// The workshop page: lessons on the left, one or two settings (A, B) side by side, each
// re-simulated by GET /api/run as soon as a control changes (debounced; a newer request aborts
// the older one, and the server stops waiting on an aborted request).
"use strict";

const DEBOUNCE_MS = 250;

const state = {
  lessons: [], controls: [], byName: {},
  scenario: "default",
  compare: false,
  sets: { a: {}, b: {} },      // side -> {key: value}: gpusim run's --set overrides
  pending: { a: null, b: null }, // side -> AbortController of the request in flight
  timers: { a: 0, b: 0 },
  last: { a: null, b: null },  // side -> last answer
  seq: { a: 0, b: 0 },
};

const $ = (sel, root) => (root || document).querySelector(sel);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "html") e.innerHTML = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  kids.flat().forEach(k => k != null && e.append(k));
  return e;
}

// --- URL: ?scenario=NAME&a=key=value&b=key=value&compare=1 -------------------------------

function readURL() {
  const q = new URLSearchParams(location.search);
  state.scenario = q.get("scenario") || "default";
  state.compare = q.get("compare") === "1";
  for (const side of ["a", "b"]) {
    state.sets[side] = {};
    for (const kv of q.getAll(side)) {
      const i = kv.indexOf("=");
      if (i > 0) state.sets[side][kv.slice(0, i)] = kv.slice(i + 1);
    }
  }
}

function setList(side) {
  // Controls' keys in the controls' order, then any other key (a fix, a remedy) as added.
  const s = state.sets[side];
  const keys = state.controls.map(c => c.key).filter(k => k in s);
  Object.keys(s).forEach(k => { if (!keys.includes(k)) keys.push(k); });
  return keys.map(k => k + "=" + s[k]);
}

function writeURL() {
  const q = new URLSearchParams();
  q.set("scenario", state.scenario);
  setList("a").forEach(kv => q.append("a", kv));
  if (state.compare) {
    q.set("compare", "1");
    setList("b").forEach(kv => q.append("b", kv));
  }
  history.replaceState(null, "", "?" + q.toString());
}

// --- copying -----------------------------------------------------------------------------

function copyText(text, what) {
  const box = $("#copied");
  const done = () => {
    box.hidden = false;
    box.textContent = "copied " + what;
    clearTimeout(box._t);
    box._t = setTimeout(() => { box.hidden = true; }, 2500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text) && done());
  } else if (fallbackCopy(text)) done();
}

function fallbackCopy(text) {
  const t = el("textarea", { class: "offscreen" });
  t.value = text;
  document.body.append(t);
  t.select();
  let ok = false;
  try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
  t.remove();
  return ok;
}

// --- lessons -----------------------------------------------------------------------------

function renderLessons() {
  const pl = $("#pitfall-list"), ol = $("#other-list");
  pl.innerHTML = ""; ol.innerHTML = "";
  state.lessons.forEach(l => {
    const a = el("a", { href: "?scenario=" + encodeURIComponent(l.name), class: "lesson-link", "data-scenario": l.name,
      onclick: ev => { ev.preventDefault(); pickScenario(l.name); } });
    if (l.is_pitfall) {
      a.append(el("span", { class: "guide", text: "§" + l.guide }), " ", l.pitfall);
      pl.append(el("li", {}, a));
    } else {
      a.textContent = l.name;
      ol.append(el("li", {}, a));
    }
  });
}

function renderLesson() {
  const l = state.byName[state.scenario];
  const sec = $("#lesson");
  sec.innerHTML = "";
  document.querySelectorAll(".lesson-link").forEach(a => a.classList.toggle("current", a.dataset.scenario === state.scenario));
  if (!l) return;
  sec.append(el("h2", {}, l.is_pitfall ? `Guide §${l.guide}: ${l.pitfall}` : l.name,
    el("code", { class: "scenario-name", text: l.name })));
  sec.append(el("p", { class: "description", text: l.description }));
  if (l.is_pitfall) sec.append(el("p", { class: "shows" }, el("b", { text: "What gpusim shows: " }), l.shows));
  sec.append(el("details", { class: "explanation", open: "" }, el("summary", { text: "The case (from the scenario file)" }),
    el("p", { class: "explain", text: l.explanation })));
  if (l.fix && l.fix.length) {
    sec.append(el("button", { type: "button", class: "show-fix", onclick: () => showFix(l) },
      `Show the fix side by side: ${l.fix_label} (${l.fix.join(" ")})`));
  }
}

function pickScenario(name) {
  state.scenario = name;
  state.sets = { a: {}, b: {} };
  renderLesson();
  buildSide("a"); buildSide("b");
  writeURL();
  runSide("a", true);
  if (state.compare) runSide("b", true);
}

function showFix(l) {
  state.sets.b = Object.assign({}, state.sets.a);
  l.fix.forEach(kv => { const i = kv.indexOf("="); state.sets.b[kv.slice(0, i)] = kv.slice(i + 1); });
  setCompare(true);
  buildSide("b");
  writeURL();
  runSide("b", true);
}

function setCompare(on) {
  state.compare = on;
  $("#compare").checked = on;
  $("#side-b").hidden = !on;
  $("#sides").classList.toggle("two", on);
}

// --- a side: controls and results ---------------------------------------------------------

function baseValue(key) {
  const l = state.byName[state.scenario];
  return l && l.settings ? l.settings[key] : undefined;
}

function buildSide(side) {
  const root = $("#side-" + side);
  root.innerHTML = "";
  root.append(el("h2", { class: "side-title", text: side === "a" ? "Setting A" : "Setting B" }));
  const form = el("form", { class: "controls", onsubmit: ev => ev.preventDefault() });
  state.controls.forEach(c => {
    let input;
    if (c.kind === "select") {
      input = el("select", { name: c.key });
      c.options.forEach(o => input.append(el("option", { value: o, text: o === "" ? "(unset)" : o })));
    } else if (c.kind === "bool") {
      input = el("input", { type: "checkbox", name: c.key });
    } else if (c.kind === "number") {
      input = el("input", { type: "number", name: c.key, min: String(c.min), step: "1" });
    } else {
      input = el("input", { type: "text", name: c.key, placeholder: "unset", spellcheck: "false" });
    }
    const onChange = () => {
      const v = c.kind === "bool" ? String(input.checked) : input.value.trim();
      if (c.kind === "number" && v === "") return;
      if (v === baseValue(c.key)) delete state.sets[side][c.key];
      else state.sets[side][c.key] = v;
      writeURL();
      runSide(side, false);
    };
    input.addEventListener("input", onChange);
    input.addEventListener("change", onChange);
    form.append(el("label", { class: "control", "data-key": c.key, title: c.help }, el("span", { text: c.label }), input));
  });
  root.append(form);
  root.append(el("div", { class: "buttons" },
    el("button", { type: "button", class: "copy-yaml", onclick: () => state.last[side] && copyText(state.last[side].yaml, "the scenario as YAML") }, "copy as YAML"),
    el("button", { type: "button", class: "copy-command", onclick: () => state.last[side] && copyText(state.last[side].command, "the gpusim command") }, "copy as gpusim command"),
    el("button", { type: "button", class: "reset", onclick: () => { state.sets[side] = {}; writeURL(); fillControls(side, null); runSide(side, true); } }, "reset to the scenario")));
  root.append(el("pre", { class: "command" }));
  root.append(el("div", { class: "status", role: "status" }));
  root.append(el("div", { class: "error", role: "alert", hidden: "" }));
  root.append(el("div", { class: "results" }));
  fillControls(side, null);
}

// fillControls shows the effective values (from the last answer, else the scenario's).
function fillControls(side, settings) {
  const root = $("#side-" + side);
  const l = state.byName[state.scenario] || {};
  const eff = Object.assign({}, settings || l.settings || {}, state.sets[side]);
  state.controls.forEach(c => {
    const input = root.querySelector(`[name="${c.key}"]`);
    if (!input || input === document.activeElement) return;
    const v = eff[c.key] !== undefined ? eff[c.key] : "";
    if (c.kind === "bool") input.checked = v === "true";
    else {
      if (c.kind === "select" && ![...input.options].some(o => o.value === v)) input.append(el("option", { value: v, text: v }));
      input.value = v;
    }
  });
}

function runSide(side, now) {
  clearTimeout(state.timers[side]);
  const root = $("#side-" + side);
  root.dataset.state = "waiting";
  $(".status", root).textContent = "simulating…";
  state.timers[side] = setTimeout(() => fetchRun(side), now ? 0 : DEBOUNCE_MS);
}

async function fetchRun(side) {
  if (state.pending[side]) state.pending[side].abort();
  const ctl = new AbortController();
  state.pending[side] = ctl;
  const seq = ++state.seq[side];
  const root = $("#side-" + side);
  root.dataset.state = "running";
  const q = new URLSearchParams();
  q.set("scenario", state.scenario);
  const sets = setList(side);
  sets.forEach(kv => q.append("set", kv));
  $(".command", root).textContent = ["gpusim run", state.scenario, ...sets.map(s => "--set " + s)].join(" ");
  let resp, body;
  try {
    resp = await fetch("/api/run?" + q.toString(), { signal: ctl.signal });
    body = await resp.json();
  } catch (e) {
    if (e.name === "AbortError") return;
    showError(side, "the server did not answer: " + e.message);
    return;
  }
  if (seq !== state.seq[side]) return;
  state.pending[side] = null;
  if (!resp.ok) {
    showError(side, body.error || resp.statusText);
    return;
  }
  state.last[side] = body;
  $(".error", root).hidden = true;
  $(".status", root).textContent = "";
  $(".command", root).textContent = body.command;
  fillControls(side, body.settings);
  renderResults(side, body);
  root.dataset.state = "done";
  root.dataset.sets = JSON.stringify(body.sets);
}

function showError(side, msg) {
  const root = $("#side-" + side);
  const e = $(".error", root);
  e.hidden = false;
  e.textContent = msg;
  $(".status", root).textContent = "";
  $(".results", root).classList.add("stale");
  root.dataset.state = "error";
}

function row(name, value, cls) {
  return el("tr", { class: cls || "" }, el("th", { text: name }), el("td", { text: value }));
}

function renderResults(side, body) {
  const r = body.result;
  const out = $(".results", $("#side-" + side));
  out.classList.remove("stale");
  out.innerHTML = "";
  const trained = r.steps_completed > 0;
  const d0 = r.devices.find(d => !d.idle) || r.devices[0];
  const t = el("table", { class: "summary" });
  t.append(row("result", r.oom ? "OOM" : "ok", r.oom ? "metric-result bad" : "metric-result good"));
  t.append(row("steps", `${r.steps_completed} of ${r.steps}`));
  t.append(row("model, GPU", `${r.model} batch ${r.global_batch} on ${r.replicas} x ${r.gpu}, ${r.precision}`));
  t.append(row("median step", trained ? fmtSeconds(r.step_time_s) : "-", "metric-step"));
  t.append(row("throughput", trained ? r.throughput_samples_per_s.toPrecision(4) + " samples/s" : "-", "metric-throughput"));
  t.append(row("GPU utilization", trained ? fmtPct(r.gpu_utilization) : "- (no step completed)", "metric-util"));
  t.append(row("input stall", trained ? fmtPct(r.input_stall_fraction) : "-", "metric-stall"));
  if (d0) {
    t.append(row("peak memory in use", `${fmtBytes(d0.peak_bytes_in_use)} of ${fmtBytes(d0.bytes_limit)} limit (${d0.name})`, "metric-peak"));
    t.append(row("pool (reserved)", `${fmtBytes(d0.peak_pool_bytes)} in ${d0.pool_growth.length} region(s)`));
  }
  if (r.replicas > 1) {
    t.append(row("all-reduce", fmtSeconds(r.allreduce_time_s)));
    t.append(row("scaling efficiency", fmtPct(r.scaling_efficiency)));
  }
  if (r.xla_compiles) t.append(row("XLA compiles", `${r.xla_compiles} taking ${fmtSeconds(r.xla_compile_time_s)}`));
  if (r.skipped_steps) t.append(row("skipped steps (loss scale)", String(r.skipped_steps)));
  out.append(t);

  if (r.oom) {
    const o = r.oom_detail || {};
    out.append(el("div", { class: "oom" },
      el("h3", { text: `Out of memory in step ${o.step}${o.op ? " at " + o.op : ""}` }),
      el("pre", { class: "oom-message", text: r.oom_message }),
      el("p", { text: `requested ${fmtBytes(o.request_bytes)} on ${o.device} (${o.allocator}); fragmentation at the OOM ${fmtPct(o.fragmentation || 0)} (free bytes outside the largest free chunk)` })));
  }
  const msgs = [...(r.warnings || []).map(w => ["warning", w]), ...(r.notes || []).map(n => ["note", n])];
  (r.processes || []).forEach(p => msgs.push(["note", `process ${p.name} holds ${p.pool_bytes.map(fmtBytes).join(", ")}${p.error ? ": " + p.error : ""}`]));
  if (msgs.length) out.append(el("ul", { class: "notes" }, msgs.map(([k, m]) => el("li", { class: k, text: `${k}: ${m}` }))));

  const figs = el("div", { class: "figures" });
  out.append(figs);
  const fig = (cls, svg, caption) => figs.append(el("figure", { class: cls, html: svg }, caption ? el("figcaption", { text: caption }) : null));

  // Memory over the run, every GPU that runs a replica (the first four).
  const devs = r.devices.filter(d => !d.idle).slice(0, 4);
  if (devs.length && devs[0].memory_timeline.length) {
    const series = [];
    devs.forEach((d, i) => {
      const n = devs.length > 1 ? " " + d.name.replace(/^.*\/(device:)?/, "") : "";
      series.push({ name: "in use (max)" + n, points: d.memory_timeline.map(p => [p.time_s, p.max_bytes_in_use]), step: true, color: PALETTE[(2 * i) % 8] });
      if (i === 0) series.push({ name: "pool", points: d.memory_timeline.map(p => [p.time_s, p.pool_bytes]), step: true, dash: "5 3", color: PALETTE[1] });
    });
    const marks = [];
    if (r.oom && r.oom_detail) {
      const last = devs[0].memory_timeline[devs[0].memory_timeline.length - 1];
      marks.push({ x: r.oom_detail.time_s, y: last.bytes_in_use + r.oom_detail.request_bytes, name: "OOM" });
    }
    fig("chart-memory-run", lineChart({ title: "Memory over the run", xLabel: "time (s)", yLabel: "bytes", bytes: true, yFmt: fmtBytes,
      series, hlines: [{ y: devs[0].bytes_limit, name: "limit", soft: true, offName: `limit ${fmtBytes(devs[0].bytes_limit)} (above the scale)` }], marks }),
      r.oom ? "The OOM comes after TF's BFC allocator has waited for frees (up to 10 s, kMaxMillisToWait in bfc_allocator.cc)." : "");
  }
  if (d0 && d0.step_memory_profile.length) {
    fig("chart-memory-step", lineChart({ title: `Memory within step ${d0.step_memory_profile_step}`, xLabel: "time in the step (ms)", yLabel: "bytes", bytes: true, yFmt: fmtBytes,
      xFmt: v => String(+(v * 1e3).toPrecision(3)),
      series: [{ name: "in use (max)", points: d0.step_memory_profile.map(p => [p.time_s, p.max_bytes_in_use]), step: true },
        { name: "pool", points: d0.step_memory_profile.map(p => [p.time_s, p.pool_bytes]), step: true, dash: "5 3" }],
      hlines: [{ y: d0.bytes_limit, name: "limit", soft: true, offName: `limit ${fmtBytes(d0.bytes_limit)} (above the scale)` }] }));
  }
  if (d0 && d0.pool_growth.length > 1) {
    const g = d0.pool_growth;
    fig("chart-pool", lineChart({ title: `Pool growth: ${g.length} regions${d0.pool_growth_dropped ? ` (+${d0.pool_growth_dropped} not shown)` : ""}`,
      xLabel: "growth of the pool (n-th region taken from the GPU)", yLabel: "bytes", bytes: true, xFmt: v => String(v), xInt: true,
      series: [{ name: "pool size", points: g.map((c, i) => [i + 1, c.pool_bytes]) },
        { name: "region added", points: g.map((c, i) => [i + 1, c.region_bytes]), color: PALETTE[1] }],
      hlines: [{ y: d0.bytes_limit, name: "limit", soft: true, offName: `limit ${fmtBytes(d0.bytes_limit)} (above the scale)` }] }),
      "regions: " + g.slice(0, 16).map(c => fmtBytes(c.region_bytes)).join(", ") + (g.length > 16 ? ", …" : ""));
  }
  if (body.regions) {
    fig("chart-regions", regionsChart(body.regions), "occupancy (TF's RenderOccupancy: * in use, x rounding waste, _ free): " + (body.regions.occupancy || ""));
  }
  // Utilization over time as nvidia-smi samples it (200 ms windows).
  const us = (r.gpu_utilization_samples || []).filter(u => u.samples.length >= 2);
  if (trained && us.length) {
    fig("chart-util", lineChart({ title: "GPU utilization over time (nvidia-smi samples)", xLabel: "time (s)", yLabel: "utilization (%)", yMax: 100,
      series: us.slice(0, 4).map((u, i) => ({ name: "GPU:" + u.device, points: u.samples.map((v, k) => [k * u.period_s, 100 * v]), color: PALETTE[(2 * i) % 8] })),
      hlines: [{ y: 100 * r.gpu_utilization, name: `mean ${fmtPct(r.gpu_utilization)}`, color: PALETTE[3] }] }));
  }
  const parts = (r.breakdown || []).filter(p => p.seconds > 0).map(p => ({ name: p.category, value: p.seconds }));
  if (parts.length) fig("chart-breakdown", stackedBar(`The median step (${fmtSeconds(r.step_time_s)}) by category`, parts, fmtSeconds));
  const kinds = (r.breakdown_by_kind || []).filter(p => p.seconds > 0).map(p => ({ name: p.category, value: p.seconds }));
  if (kinds.length) fig("chart-kinds", stackedBar("The same step by op kind", kinds, fmtSeconds));

  if (r.diagnosis) {
    const dg = r.diagnosis;
    const box = el("div", { class: "diagnosis" }, el("h3", { text: "Diagnosis: " + dg.bound }),
      el("ul", {}, (dg.evidence || []).map(e => el("li", { text: e }))));
    if (dg.remedies && dg.remedies.length) {
      const tb = el("table", { class: "remedies" }, el("tr", {}, ["#", "change (re-simulated)", "throughput", "gain", "GPU utilization", ""].map(h => el("th", { text: h }))));
      dg.remedies.forEach((m, i) => {
        tb.append(el("tr", { class: i === 0 ? "best" : "" },
          el("td", { text: String(i + 1) }), el("td", {}, m.change, el("br"), el("code", { text: m.set.map(s => "--set " + s).join(" ") })),
          el("td", { text: m.oom ? "OOM" : m.throughput_samples_per_s.toPrecision(4) + "/s" }),
          el("td", { text: m.oom ? "-" : (m.gain >= 0 ? "+" : "") + fmtPct(m.gain) }),
          el("td", { text: m.oom ? "-" : fmtPct(m.gpu_utilization) }),
          el("td", {}, el("button", { type: "button", class: "apply-remedy", onclick: () => applyRemedy(side, m.set) }, side === "a" ? "try it as B" : "apply"))));
      });
      box.append(el("p", { text: "Remedies, best first:" }), tb);
    }
    out.append(box);
  }
  if (r.device_table && r.device_table.length) {
    const tb = el("table", { class: "devices" }, el("tr", {}, ["nvidia-smi", "CUDA", "TF device", "status", "used (nvidia-smi)"].map(h => el("th", { text: h }))));
    r.device_table.forEach(d => {
      const ph = (r.physical_gpus || []).find(p => p.index === d.nvidia_smi);
      tb.append(el("tr", {}, el("td", { text: "GPU " + d.nvidia_smi }), el("td", { text: d.cuda_ordinal >= 0 ? String(d.cuda_ordinal) : "-" }),
        el("td", { text: d.tf_device || "-" }), el("td", { text: d.status }),
        el("td", { text: ph ? `${fmtBytes(ph.used_bytes)} of ${fmtBytes(ph.total_bytes)}` : "" })));
    });
    out.append(el("h3", { text: "Devices (nvidia-smi numbering vs TF's)" }), tb);
  }
  out.append(el("details", { class: "tf-code", open: "" }, el("summary", { text: "The TensorFlow program this simulates" }), el("pre", { text: body.tf_code })));
  out.append(el("details", { class: "yaml" }, el("summary", { text: "The scenario as YAML" }), el("pre", { text: body.yaml })));
}

function applyRemedy(side, sets) {
  const target = side === "a" ? "b" : side;
  state.sets[target] = Object.assign({}, state.sets[side]);
  sets.forEach(kv => { const i = kv.indexOf("="); state.sets[target][kv.slice(0, i)] = kv.slice(i + 1); });
  if (target === "b") setCompare(true);
  buildSide(target);
  writeURL();
  runSide(target, true);
}

async function main() {
  readURL();
  const resp = await fetch("/api/lessons");
  const body = await resp.json();
  state.lessons = body.lessons;
  state.controls = body.controls;
  state.lessons.forEach(l => { state.byName[l.name] = l; });
  renderLessons();
  renderLesson();
  $("#compare").addEventListener("change", ev => {
    if (ev.target.checked && !Object.keys(state.sets.b).length) state.sets.b = Object.assign({}, state.sets.a);
    setCompare(ev.target.checked);
    buildSide("b");
    writeURL();
    if (state.compare) runSide("b", true);
  });
  $("#copy-link").addEventListener("click", () => copyText(location.href, "the link"));
  buildSide("a"); buildSide("b");
  setCompare(state.compare);
  runSide("a", true);
  if (state.compare) runSide("b", true);
}

main();
