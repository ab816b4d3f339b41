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
  // The same list as a select in the header, for a screen too narrow for the list beside
  // the page (a 1024-pixel projector).
  const sel = $("#lesson-select");
  sel.innerHTML = "";
  const groups = { true: el("optgroup", { label: "The guide's pitfalls" }), false: el("optgroup", { label: "Other scenarios" }) };
  sel.append(groups.true, groups.false);
  state.lessons.forEach(l => groups[l.is_pitfall].append(el("option", { value: l.name, text: l.is_pitfall ? `§${l.guide} ${l.pitfall}` : l.name })));
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
  $("#lesson-select").value = state.scenario;
  if (!l) return;
  sec.append(el("h2", {}, l.is_pitfall ? `Guide §${l.guide}: ${l.pitfall}` : l.name,
    el("code", { class: "scenario-name", text: l.name })));
  sec.append(el("p", { class: "description", text: l.description }));
  if (l.is_pitfall) sec.append(el("p", { class: "shows" }, el("b", { text: "What gpusim shows: " }), l.shows));
  // The case is open where the screen has room for it and a result below it; comparing, the
  // class has read it.
  const open = window.innerHeight >= 900 && !state.compare ? { open: "" } : {};
  sec.append(el("details", Object.assign({ class: "explanation" }, open), el("summary", { text: "The case (from the scenario file)" }),
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
  document.body.classList.toggle("comparing", on);
  foldSettings();
  renderFigures("a");
  renderChange();
}

// roomy says whether the screen has room for both sides' settings and their results.
function roomy() { return !state.compare || window.innerHeight >= 1100; }

// foldSettings folds the settings away when comparing on a short screen, so that both sides'
// results show (the fold's line says what each side changed), and the case with them.
function foldSettings() {
  document.querySelectorAll("details.settings").forEach(d => { d.open = roomy(); });
  const ex = $("#lesson details.explanation");
  if (ex && state.compare) ex.open = false;
}

// --- a side: controls and results ---------------------------------------------------------

function baseValue(key) {
  const l = state.byName[state.scenario];
  return l && l.settings ? l.settings[key] : undefined;
}

function buildSide(side) {
  const root = $("#side-" + side);
  root.innerHTML = "";
  root.append(el("div", { class: "side-head" }, el("h2", { class: "side-title", text: side === "a" ? "Setting A" : "Setting B" }),
    el("div", { class: "headline-slot" })));
  const form = el("form", { class: "controls", onsubmit: ev => ev.preventDefault() });
  state.controls.forEach(c => {
    let input;
    if (c.kind === "select") {
      input = el("select", { name: c.key });
      c.options.forEach((o, i) => input.append(el("option", { value: o, text: c.labels ? c.labels[i] : o === "" ? "(unset)" : o })));
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
      countChanged(side);
      runSide(side, false);
    };
    input.addEventListener("input", onChange);
    input.addEventListener("change", onChange);
    form.append(el("label", { class: "control", "data-key": c.key, title: c.help }, el("span", { text: c.label }), input));
  });
  root.append(el("details", Object.assign({ class: "settings" }, roomy() ? { open: "" } : {}), el("summary", {}, "settings ", el("span", { class: "changed" })), form));
  root.append(el("div", { class: "buttons" },
    el("button", { type: "button", class: "copy-yaml", onclick: () => state.last[side] && copyText(state.last[side].yaml, "the scenario as YAML") }, "copy as YAML"),
    el("button", { type: "button", class: "copy-command", onclick: () => state.last[side] && copyText(state.last[side].command, "the gpusim command") }, "copy as gpusim command"),
    el("button", { type: "button", class: "reset", onclick: () => { state.sets[side] = {}; writeURL(); fillControls(side, null); countChanged(side); runSide(side, true); } }, "reset to the scenario")));
  root.append(el("pre", { class: "command" }));
  root.append(el("div", { class: "status", role: "status" }));
  root.append(el("div", { class: "error", role: "alert", hidden: "" }));
  root.append(el("div", { class: "results" }));
  fillControls(side, null);
  countChanged(side);
}

// countChanged says on the settings' fold how many settings differ from the scenario's.
function countChanged(side) {
  const n = Object.keys(state.sets[side]).length;
  $("#side-" + side + " .settings .changed").textContent = n ? `(${n} changed from the scenario: ${setList(side).join(" ")})` : "(as the scenario has them)";
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
  if (side === "a") planStale();
  const root = $("#side-" + side);
  root.dataset.state = "waiting";
  $(".status", root).textContent = "simulating…";
  renderChange();
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
  // Both sides' charts share their axes: a new answer can rescale the other side's.
  renderFigures("a");
  if (state.compare) renderFigures("b");
  renderChange();
}

function showError(side, msg) {
  const root = $("#side-" + side);
  const e = $(".error", root);
  e.hidden = false;
  e.textContent = msg;
  $(".status", root).textContent = "";
  $(".results", root).classList.add("stale");
  root.dataset.state = "error";
  renderChange();
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
  $("#lesson-select").addEventListener("change", ev => pickScenario(ev.target.value));
  buildSide("a"); buildSide("b");
  buildPlanPanel();
  setCompare(state.compare);
  runSide("a", true);
  if (state.compare) runSide("b", true);
}

main();
