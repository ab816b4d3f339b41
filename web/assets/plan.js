// The plan panel: for the page's scenario with setting A's overrides, GET /api/plan searches
// the small space (gpusim plan --space small) for a goal and the panel shows the ranked plans
// with their intervals, why each is where it is, and the top plan as --set lines (to try as B)
// and as TF/Keras code. A search runs when asked (it simulates tens of plans), and a newer one
// aborts the older.
"use strict";

const planState = { pending: null, seq: 0 };

const GOALS = [
  ["throughput", "throughput (samples/s)"],
  ["time-to-train", "time to train"],
  ["cost", "cost ($ to train)"],
  ["max-batch", "largest batch that fits"],
];

function buildPlanPanel() {
  const root = $("#plan");
  root.innerHTML = "";
  const goal = el("select", { name: "goal", "aria-label": "goal" });
  GOALS.forEach(([v, label]) => goal.append(el("option", { value: v, text: label })));
  const num = (name, value, attrs) => el("input", Object.assign({ type: "number", name, value, min: "1", step: "any" }, attrs || {}));
  const form = el("form", { class: "plan-form", onsubmit: ev => { ev.preventDefault(); fetchPlan(); } },
    el("label", {}, "goal ", goal),
    el("label", { class: "plan-training" }, "samples per epoch ", num("dataset_size", "1000000", { step: "1" })),
    el("label", { class: "plan-training" }, "epochs ", num("epochs", "1", { step: "1" })),
    el("label", { class: "plan-price" }, "$ per GPU-hour ", num("price", "", { min: "0", placeholder: "your price" })),
    el("button", { type: "submit", class: "plan-search" }, "search"));
  const showFields = () => {
    const g = goal.value;
    form.querySelectorAll(".plan-training").forEach(l => { l.hidden = g !== "time-to-train" && g !== "cost"; });
    form.querySelector(".plan-price").hidden = g !== "cost";
  };
  goal.addEventListener("change", showFields);
  showFields();
  root.append(el("h2", { text: "Plan: the settings that best meet a goal" }),
    el("p", { class: "plan-intro", text: "Searches setting A's batch, accumulation, precision and loss scaling, XLA, TF32 and tf.data pipeline on its GPUs (gpusim plan --space small), prunes by memory and speed bounds, simulates the rest and ranks the plans that fit with 10% of the memory limit free." }),
    form, el("pre", { class: "plan-command" }), el("div", { class: "plan-status", role: "status" }),
    el("div", { class: "plan-error", role: "alert", hidden: "" }), el("div", { class: "plan-results" }));
}

// planStale marks the shown plans as another scenario's or settings' once A changes.
function planStale() {
  const out = $("#plan .plan-results");
  if (out && out.childElementCount) out.classList.add("stale");
}

async function fetchPlan() {
  if (planState.pending) planState.pending.abort();
  const ctl = new AbortController();
  planState.pending = ctl;
  const seq = ++planState.seq;
  const root = $("#plan");
  const form = $(".plan-form", root);
  const q = new URLSearchParams();
  q.set("scenario", state.scenario);
  setList("a").forEach(kv => q.append("set", kv));
  const goal = form.goal.value;
  q.set("goal", goal);
  if (goal === "time-to-train" || goal === "cost") {
    q.set("dataset_size", form.dataset_size.value.trim());
    q.set("epochs", form.epochs.value.trim());
  }
  if (goal === "cost") q.set("price", form.price.value.trim());
  root.dataset.state = "running";
  $(".plan-status", root).textContent = "searching…";
  $(".plan-error", root).hidden = true;
  let resp, body;
  try {
    resp = await fetch("/api/plan?" + q.toString(), { signal: ctl.signal });
    body = await resp.json();
  } catch (e) {
    if (e.name === "AbortError") return;
    planError("the server did not answer: " + e.message);
    return;
  }
  if (seq !== planState.seq) return;
  planState.pending = null;
  if (!resp.ok) {
    planError(body.error || resp.statusText);
    return;
  }
  $(".plan-status", root).textContent = "";
  $(".plan-command", root).textContent = body.command + (body.prices_yaml ? "\n# prices.yaml:\n" + body.prices_yaml.trimEnd().split("\n").map(l => "# " + l).join("\n") : "");
  renderPlan(body);
  root.dataset.state = "done";
}

function planError(msg) {
  const root = $("#plan");
  const e = $(".plan-error", root);
  e.hidden = false;
  e.textContent = msg;
  $(".plan-status", root).textContent = "";
  $(".plan-results", root).classList.add("stale");
  root.dataset.state = "error";
}

function fmtInterval(iv, f) { return iv ? `${f(iv[0])}-${f(iv[1])}` : "no interval yet"; }

function fmtTrain(s) {
  if (s >= 86400) return (s / 86400).toFixed(1) + " d";
  if (s >= 3600) return (s / 3600).toFixed(1) + " h";
  return fmtSeconds(s);
}

function tunable(n) { return n === -1 ? "AUTOTUNE" : String(n); }

function renderPlan(body) {
  const out = $("#plan .plan-results");
  out.classList.remove("stale");
  out.innerHTML = "";
  out.append(el("p", { class: "plan-counts", text:
    `Searched ${body.space} plans: ${body.pruned_memory} pruned by the memory bound, ${body.pruned_roofline} by the roofline bound, ` +
    `${body.pruned_compute} by the compute bound; ${body.simulated} simulated (${body.infeasible} do not fit). Intervals: ${body.interval_note}.` }));
  if (!body.plans.length) {
    out.append(el("p", { class: "plan-none", text: "No plan fits within the constraints." }));
    return;
  }
  const money = body.goal === "cost" || body.goal === "time-to-train";
  const input = body.current.plan.parallel_calls !== undefined;
  // The small space keeps the scenario's GPU, count and strategy: said once, not per row.
  const k0 = body.current.plan;
  out.append(el("p", { class: "plan-hardware", text: `Every plan on ${k0.gpus} x ${k0.gpu}, ${k0.strategy} strategy (the scenario's).` }));
  const heads = ["rank", "batch", "accum", "precision", "XLA", "TF32", "memory"];
  if (input) heads.push("parallel calls", "prefetch");
  heads.push("samples/s", "80% interval", "step", "peak / limit", "vs now");
  if (money) heads.push("time to train", "GPU-hours");
  if (body.goal === "cost") heads.push("$ (80% interval)");
  // Columns that may take two lines, so that the table fits a projector's width.
  const wrap = ["peak / limit", "precision", "$ (80% interval)"];
  const tb = el("table", { class: "plan-table" }, el("tr", {}, heads.map(h => el("th", { text: h }))));
  const now = body.current.throughput_samples_per_s;
  [body.current, ...body.plans].forEach(p => {
    const k = p.plan;
    const prec = k.precision + (k.static_loss_scale && k.precision === "mixed_float16" ? " (static)" : "");
    const cells = [p.rank ? String(p.rank) : "now", String(k.global_batch), String(k.accumulation_steps),
      prec, String(k.xla), String(k.tf32), k.memory_mode];
    if (input) cells.push(tunable(k.parallel_calls), tunable(k.prefetch));
    const oom = !!p.oom;
    cells.push(oom ? "OOM" : p.throughput_samples_per_s.toFixed(0), fmtInterval(p.throughput_samples_per_s_interval, x => x.toFixed(0)),
      oom ? "-" : fmtSeconds(p.step_time_s), `${fmtBytes(p.peak_bytes_in_use)} / ${fmtBytes(p.bytes_limit)}`,
      p.rank && now > 0 ? (p.throughput_samples_per_s >= now ? "+" : "") + fmtPct(p.throughput_samples_per_s / now - 1) : "-");
    if (money) cells.push(p.fits ? fmtTrain(p.train_seconds) : "-", p.fits ? p.gpu_hours.toFixed(2) : "-");
    if (body.goal === "cost") cells.push(p.fits ? `$${p.dollars.toFixed(2)} (${fmtInterval(p.dollars_interval, x => "$" + x.toFixed(2))})` : "-");
    tb.append(el("tr", { class: p.rank === 1 ? "best" : p.rank ? "" : "now" }, cells.map((c, i) => el("td", { text: c, class: wrap.includes(heads[i]) ? "wrap" : "" }))));
  });
  out.append(el("div", { class: "plan-scroll" }, tb));
  out.append(el("h3", { text: "Why each is where it is" }), el("ul", { class: "plan-why" },
    [body.current, ...body.plans].map(p => el("li", {}, el("b", { text: (p.rank ? "plan " + p.rank : "now") + " " + p.bound + ": " }), p.why))));
  const top = body.plans[0];
  const diff = el("div", { class: "plan-top" }, el("h3", { text: "Plan 1 as a scenario diff" }));
  if (top.set.length) {
    diff.append(el("pre", { class: "plan-set", text: top.set.map(s => "--set " + s).join("\n") }),
      el("button", { type: "button", class: "plan-try", onclick: () => applyRemedy("a", top.set) }, "try plan 1 as B"));
  } else {
    diff.append(el("p", { text: "The scenario's own settings are the best plan." }));
  }
  out.append(diff, el("details", { class: "plan-tf-code", open: "" }, el("summary", { text: "Plan 1 as TF/Keras code" }), el("pre", { text: top.tf_code })));
}
