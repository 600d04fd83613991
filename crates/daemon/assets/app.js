// Nameway status page: polls /api/status every second and draws the last minutes with uPlot.
"use strict";

const $ = (id) => document.getElementById(id);
const plots = {};
window.namewayPlots = plots; // read by the browser test
const COLORS = ["#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#4b5563",
  "#db2777", "#65a30d", "#ca8a04", "#7c3aed"];

function si(v, unit) {
  if (v == null || !isFinite(v)) return "–";
  const a = Math.abs(v);
  const [d, p] = a >= 1e9 ? [1e9, "G"] : a >= 1e6 ? [1e6, "M"] : a >= 1e3 ? [1e3, "k"] : [1, ""];
  const x = v / d;
  return (x >= 100 || d === 1 && Number.isInteger(x) ? x.toFixed(0) : x.toFixed(1)) + " " + p + (unit || "");
}

function bytes(v) {
  if (v == null) return "–";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return v.toFixed(i ? 1 : 0) + " " + u[i];
}

function duration(s) {
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
  return "up " + (d ? d + "d " : "") + (d || h ? h + "h " : "") + m + "m " + Math.floor(s % 60) + "s";
}

function width(el) {
  return Math.max(200, el.clientWidth);
}

function plot(id, series, opts) {
  const el = $(id);
  const u = new uPlot({
    width: width(el),
    height: 180,
    legend: { live: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, ...(opts && opts.scales) },
    axes: [{}, { size: 72, values: (u, vals) => vals.map((v) => (opts && opts.fmt ? opts.fmt(v) : si(v))) }],
    series: [{}, ...series.map((s, i) => ({ label: s, stroke: COLORS[i % COLORS.length], width: 1.5, points: { show: false } }))],
  }, [[], ...series.map(() => [])], el);
  plots[id] = u;
  return u;
}

function ensureDrops(reasons) {
  const u = plots["p-drops"];
  const have = u ? u.series.slice(1).map((s) => s.label) : [];
  if (u && have.join() === reasons.join()) return u;
  if (u) u.destroy();
  return plot("p-drops", reasons.length ? reasons : ["none"]);
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
}

function fillTable(id, rows) {
  const body = $(id).querySelector("tbody");
  body.replaceChildren(...rows.map((cells) => {
    const tr = document.createElement("tr");
    for (const [text, cls] of cells) cell(tr, text, cls);
    return tr;
  }));
}

function dropsText(f) {
  const all = { ...f.drops };
  for (const [k, v] of Object.entries(f.link_drops)) all["link " + k] = v;
  const parts = Object.entries(all).map(([k, v]) => k + " " + v);
  return parts.length ? parts.join(", ") : "0";
}

function render(s) {
  const h = s.history;
  const last = (a) => (a.length ? a[a.length - 1] : null);
  $("version").textContent = s.version;
  $("uptime").textContent = duration(s.uptime_s);
  $("t-exchanges").textContent = si(last(h.exchanges));
  $("t-throughput").textContent = bytes((last(h.rx_bytes) || 0) + (last(h.tx_bytes) || 0)) + "/s";
  $("t-pit").textContent = si(s.forwarder.pit_entries);
  const ratio = last(h.cs_hit_ratio);
  $("t-cs").textContent = ratio == null ? "–" : (100 * ratio).toFixed(1) + " %";
  const reasons = Object.keys(h.drops).filter((r) => h.drops[r].some((v) => v > 0));
  $("t-drops").textContent = si(reasons.reduce((sum, r) => sum + (last(h.drops[r]) || 0), 0));
  $("t-rss").textContent = bytes(s.process.resident_memory_bytes);

  plots["p-rate"].setData([h.t, h.exchanges, h.interests]);
  plots["p-bytes"].setData([h.t, h.rx_bytes, h.tx_bytes]);
  plots["p-pit"].setData([h.t, h.pit]);
  plots["p-cs"].setData([h.t, h.cs_hit_ratio]);
  const d = ensureDrops(reasons);
  d.setData([h.t, ...(reasons.length ? reasons.map((r) => h.drops[r]) : [h.t.map(() => 0)])]);

  fillTable("faces", s.faces.map((f) => [
    [String(f.id)], [f.remote], [f.local], [f.scope], [f.persistency],
    [`${f.n_in_interests}/${f.n_in_data}/${f.n_in_nacks}`, "n"],
    [`${f.n_out_interests}/${f.n_out_data}/${f.n_out_nacks}`, "n"],
    [bytes(f.in_bytes), "n"], [bytes(f.out_bytes), "n"], [dropsText(f)],
  ]));
  fillTable("routes", s.routes.map((r) => [[r.prefix], [r.next_hops.map((n) => `${n.face} ×${n.cost}`).join(", ")]]));
  fillTable("strategies", s.strategies.map((c) => [[c.prefix], [c.strategy]]));
}

async function tick() {
  const state = $("state");
  try {
    const r = await fetch("/api/status", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    render(await r.json());
    state.textContent = "live";
    state.className = "state ok";
  } catch (e) {
    state.textContent = "no answer";
    state.className = "state err";
  }
}

function start() {
  plot("p-rate", ["exchanges/s", "Interests/s"]);
  plot("p-bytes", ["received", "sent"], { fmt: (v) => bytes(v) });
  plot("p-pit", ["entries"]);
  plot("p-cs", ["hit ratio"], { scales: { y: { range: [0, 1] } }, fmt: (v) => (100 * v).toFixed(0) + "%" });
  ensureDrops([]);
  window.addEventListener("resize", () => {
    for (const [id, u] of Object.entries(plots)) u.setSize({ width: width($(id)), height: 180 });
  });
  tick();
  setInterval(tick, 1000);
}

start();
