// The simulation report page: the data as JSON in a script element, drawn by an inline script.
#include "runtime/report/html_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "compiler/support/json_writer.hpp"
#include "compiler/support/markup.hpp"
#include "runtime/report/page.hpp"

namespace gov::report {

namespace {

/// A finite number as JSON decimal text: integers exactly, others with at most 3 decimals.
std::string decimal_text(double value) {
  if (!std::isfinite(value)) return "0";
  const double rounded = std::round(value * 1000.0) / 1000.0;
  if (rounded == std::trunc(rounded) && std::fabs(rounded) < 9.0e15) {
    return fmt::format("{}", static_cast<int64_t>(rounded));
  }
  std::string text = fmt::format("{:.3f}", rounded);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  if (text == "-0") text = "0";
  return text;
}

double display(Resource resource, int64_t amount) {
  return resource == Resource::vcpu ? static_cast<double>(amount) / 1000.0 : static_cast<double>(amount);
}

void numbers(JsonWriter& w, const std::vector<double>& values) {
  w.begin_array();
  for (double v : values) w.decimal(decimal_text(v));
  w.end_array();
}

void percentiles(JsonWriter& w, const std::array<double, 3>& values) {
  w.begin_array();
  for (double v : values) {
    if (v < 0) {
      w.null();
    } else {
      w.decimal(decimal_text(v));
    }
  }
  w.end_array();
}

// The page. `@TITLE@` and `@DATA@` are replaced; nothing in it refers to anything outside the
// file (no src, no href to a URL, no import, no fetch).
constexpr std::string_view kPage = R"page(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 40px; color: #1d2430; background: #fafbfc; }
h1 { font-size: 20px; margin: 18px 0 4px; }
h2 { font-size: 16px; margin: 26px 0 6px; }
.note { color: #5b6472; font-size: 12px; }
.controls { position: sticky; top: 0; background: #fafbfc; padding: 8px 0; border-bottom: 1px solid #dde1e6; z-index: 1; }
.grid { display: flex; flex-wrap: wrap; gap: 12px; }
.panel { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 8px; }
.panel h3 { font-size: 13px; margin: 0 0 4px; font-weight: 600; }
svg.chart { display: block; width: 560px; height: 200px; }
.legend span { display: inline-block; margin-right: 12px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
table { border-collapse: collapse; font-size: 12px; background: #fff; }
th, td { border: 1px solid #dde1e6; padding: 3px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
.axis { font-size: 10px; fill: #5b6472; }
</style>
</head>
<body>
<h1>@TITLE@</h1>
<div class="note" id="span"></div>
<div class="controls">
<label>Team <select id="team"><option value="-1">all teams</option></select></label>
<span class="note" id="bucket-note"></span>
</div>
<h2>Usage against quota, per instance type</h2>
<div class="legend"><span><i style="background:#3b76c4"></i>own quota</span><span><i style="background:#f0a23b"></i>borrowed</span><span><i style="background:#1d2430"></i>nominal quota (dashed)</span><span><i style="background:#c43b3b"></i>nominal + borrowing limit (dotted)</span></div>
<div class="grid" id="usage"></div>
<h2>Pending tasks</h2>
<div class="panel"><svg class="chart" id="pending" data-chart="pending"></svg></div>
<h2>Admission wait, every admission (requeues included)</h2>
<div class="panel"><div id="wait-stats" class="note"></div><svg class="chart" id="waits" data-chart="waits"></svg></div>
<h2>Preemptions</h2>
<div class="legend"><span><i style="background:#7a4fc4"></i>in-team</span><span><i style="background:#c43b3b"></i>reclaim</span><span><i style="background:#2f9e6e"></i>fair-sharing</span></div>
<div class="panel"><svg class="chart" id="preemptions" data-chart="preemptions"></svg></div>
<h2>Cluster utilization per instance type</h2>
<div class="legend" id="util-legend"></div>
<div class="panel"><svg class="chart" id="utilization" data-chart="utilization"></svg></div>
<h2>Worst waits</h2>
<table id="worst"><thead><tr><th>task</th><th>team</th><th>waited</th><th>from</th><th>admitted</th><th>reason</th><th>message</th></tr></thead><tbody></tbody></table>
<script type="application/json" id="data">@DATA@</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
// The SVG namespace, from an svg element the HTML parser made (no URL is written in the page).
const NS = document.getElementById("pending").namespaceURI;
const W = 560, H = 200, L = 48, R = 8, T = 8, B = 22;
const KIND_COLORS = ["#7a4fc4", "#c43b3b", "#2f9e6e"];
const PALETTE = ["#3b76c4", "#f0a23b", "#2f9e6e", "#c43b3b", "#7a4fc4", "#8c6d31", "#d6616b", "#637939"];
const UNITS = {gpu: "GPUs", neuron: "Neuron devices", vcpu: "vCPUs"};

function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 120) return s + " s";
  if (s < 7200) return Math.round(s / 60) + " min";
  if (s < 172800) return (s / 3600).toFixed(1) + " h";
  return (s / 86400).toFixed(1) + " d";
}
// A time of the replay: the UTC date and time when time 0 is a date (D.epoch, the usage report's
// origin: a trace of Unix times, or --workloads' creationTimestamps), as the usage report's dates
// are (an SRE helper's finding: "d20362 00:02:45" beside the CSV's 2025-10-01); else the time since 0.
const CALENDAR_FROM = 946684800000;  // 2000-01-01 00:00 UTC, in ms
function clock(ms) {
  if (D.epoch + ms >= CALENDAR_FROM) return new Date(D.epoch + ms).toISOString().slice(0, 19).replace("T", " ");
  const s = Math.floor(ms / 1000), d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600);
  const m = Math.floor(s % 3600 / 60), sec = s % 60, p = (n) => String(n).padStart(2, "0");
  return (d ? "d" + d + " " : "") + p(h) + ":" + p(m) + ":" + p(sec);
}
function nice(v) {
  if (!(v > 0)) return 1;
  const e = Math.pow(10, Math.floor(Math.log10(v))), f = v / e;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}
// A chart frame: axes for `n` buckets and values up to `ymax`; returns the scales.
function frame(svg, n, ymax, ylabel) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  const top = nice(ymax);
  const x = (i) => L + (W - L - R) * i / Math.max(1, n);
  const y = (v) => H - B - (H - B - T) * v / top;
  el("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#9aa3ad"}, svg);
  el("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#9aa3ad"}, svg);
  for (const v of [0, top / 2, top]) {
    const t = el("text", {x: L - 4, y: y(v) + 3, "text-anchor": "end", class: "axis"}, svg);
    t.textContent = Math.round(v * 100) / 100;
  }
  for (const i of [0, Math.floor(n / 2), n]) {
    const anchor = i === 0 ? "start" : i === n ? "end" : "middle";
    const t = el("text", {x: x(i), y: H - 6, "text-anchor": anchor, class: "axis"}, svg);
    t.textContent = clock(D.origin + i * D.width);
  }
  if (ylabel) {
    const t = el("text", {x: L + 4, y: T + 10, class: "axis"}, svg);
    t.textContent = ylabel;
  }
  return {x, y, top};
}
function area(svg, s, lower, upper, color) {
  let d = "";
  for (let i = 0; i < upper.length; i++) d += (i ? "L" : "M") + s.x(i) + "," + s.y(upper[i]) + "L" + s.x(i + 1) + "," + s.y(upper[i]);
  for (let i = lower.length - 1; i >= 0; i--) d += "L" + s.x(i + 1) + "," + s.y(lower[i]) + "L" + s.x(i) + "," + s.y(lower[i]);
  if (upper.length) el("path", {d: d + "Z", fill: color, "fill-opacity": 0.75, stroke: "none"}, svg);
}
function line(svg, s, values, color) {
  let d = "";
  for (let i = 0; i < values.length; i++) d += (i ? "L" : "M") + s.x(i + 0.5) + "," + s.y(values[i]);
  if (values.length) el("path", {d, fill: "none", stroke: color, "stroke-width": 1.5}, svg);
}
function hline(svg, s, v, color, dash) {
  el("line", {x1: L, x2: W - R, y1: s.y(v), y2: s.y(v), stroke: color, "stroke-dasharray": dash}, svg);
}
function sum(arrays, n) {
  const out = new Array(n === undefined ? D.buckets : n).fill(0);
  for (const a of arrays) for (let i = 0; i < a.length; i++) out[i] += a[i];
  return out;
}
function team() { return Number(document.getElementById("team").value); }

function drawUsage() {
  const box = document.getElementById("usage");
  box.replaceChildren();
  const t = team();
  const groups = new Map();  // flavor → series of the chosen team(s)
  for (const s of D.usage) {
    if (t >= 0 && s.team !== t) continue;
    const key = s.flavor + "/" + s.resource;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(s);
  }
  for (const [key, list] of groups) {
    const panel = document.createElement("div");
    panel.className = "panel";
    const h = document.createElement("h3");
    const unit = UNITS[list[0].resource] || list[0].resource;
    h.textContent = D.flavors[list[0].flavor] + " \u2014 " + unit + (t >= 0 ? " \u2014 " + D.teams[t] : " \u2014 all teams");
    panel.appendChild(h);
    const svg = el("svg", {class: "chart", "data-chart": "usage", "data-flavor": D.flavors[list[0].flavor]}, panel);
    box.appendChild(panel);
    const own = sum(list.map((s) => s.own)), borrowed = sum(list.map((s) => s.borrowed));
    const total = own.map((v, i) => v + borrowed[i]);
    const nominal = list.reduce((a, s) => a + s.nominal, 0);
    const limited = list.every((s) => s.limit !== null);
    const limit = limited ? list.reduce((a, s) => a + s.nominal + s.limit, 0) : null;
    const sc = frame(svg, D.buckets, Math.max(1, nominal, limit || 0, ...total), unit);
    area(svg, sc, own.map(() => 0), own, "#3b76c4");
    area(svg, sc, own, total, "#f0a23b");
    if (nominal > 0) hline(svg, sc, nominal, "#1d2430", "6 3");
    if (limit !== null && limit > nominal) hline(svg, sc, limit, "#c43b3b", "2 3");
  }
  if (!groups.size) {
    const p = document.createElement("div");
    p.className = "panel";
    p.textContent = "no usage";
    box.appendChild(p);
  }
}
function drawPending() {
  const svg = document.getElementById("pending"), t = team();
  const values = t >= 0 ? D.pending[t] : sum(D.pending);
  const sc = frame(svg, D.buckets, Math.max(1, ...values), "tasks (average per bucket)");
  line(svg, sc, values, "#3b76c4");
}
function drawWaits() {
  const svg = document.getElementById("waits"), t = team();
  const counts = t >= 0 ? D.waits[t] : sum(D.waits, D.waitBins.length + 1);
  const n = counts.length;
  svg.replaceChildren();
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  const top = nice(Math.max(1, ...counts));
  const bw = (W - L - R) / n;
  el("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#9aa3ad"}, svg);
  for (let i = 0; i < n; i++) {
    const h = (H - B - T) * counts[i] / top;
    el("rect", {x: L + i * bw + 1, y: H - B - h, width: Math.max(1, bw - 2), height: h, fill: "#3b76c4"}, svg);
    if (i % 3 === 0) {
      const label = el("text", {x: L + i * bw + bw / 2, y: H - 6, "text-anchor": "middle", class: "axis"}, svg);
      label.textContent = i < D.waitBins.length ? "\u2264" + duration(D.waitBins[i] * 1000) : ">" + duration(D.waitBins[n - 2] * 1000);
    }
  }
  const yt = el("text", {x: L - 4, y: T + 8, "text-anchor": "end", class: "axis"}, svg);
  yt.textContent = top;
  const p = t >= 0 ? D.percentiles[t] : D.percentilesAll;
  const total = counts.reduce((a, b) => a + b, 0);
  document.getElementById("wait-stats").textContent = total + " admissions; " +
    (p[0] === null ? "no admission" : "p50 " + duration(p[0] * 1000) + ", p95 " + duration(p[1] * 1000) + ", p99 " + duration(p[2] * 1000)) +
    " (from submission, or the last preemption, to admission)";
}
function drawPreemptions() {
  const svg = document.getElementById("preemptions"), t = team();
  const byKind = [0, 1, 2].map(() => new Array(D.buckets).fill(0));
  for (const [pt, b, k, c] of D.preemptions) if (t < 0 || pt === t) byKind[k][b] += c;
  const total = byKind[0].map((v, i) => v + byKind[1][i] + byKind[2][i]);
  const sc = frame(svg, D.buckets, Math.max(1, ...total), "preemptions per bucket");
  const bw = (W - L - R) / Math.max(1, D.buckets);
  for (let i = 0; i < D.buckets; i++) {
    let base = 0;
    for (let k = 0; k < 3; k++) {
      const v = byKind[k][i];
      if (!v) continue;
      el("rect", {x: sc.x(i), y: sc.y(base + v), width: Math.max(1, bw - 1), height: sc.y(base) - sc.y(base + v), fill: KIND_COLORS[k]}, svg);
      base += v;
    }
  }
}
function drawUtilization() {
  const svg = document.getElementById("utilization");
  const legend = document.getElementById("util-legend");
  legend.replaceChildren();
  const lines = [];
  D.flavors.forEach((name, f) => {
    const list = D.usage.filter((s) => s.flavor === f);
    if (!list.length) return;
    const resource = list[0].resource;
    const cap = D.capacity.find((c) => c.flavor === f && c.resource === resource);
    const denominator = cap && cap.capacity > 0 ? cap.capacity : list.reduce((a, s) => a + s.nominal, 0);
    if (!(denominator > 0)) return;
    const same = list.filter((s) => s.resource === resource);
    const used = sum(same.map((s) => s.own).concat(same.map((s) => s.borrowed)));
    lines.push({name, values: used.map((v) => 100 * v / denominator)});
  });
  // Above 100 % when the quotas exceed the capacity (admission is decided on quotas alone): the
  // axis grows to show it, and a line marks the capacity.
  const top = Math.max(100, ...lines.map((l) => Math.max(0, ...l.values)));
  const sc = frame(svg, D.buckets, top, "% of capacity");
  if (top > 100) hline(svg, sc, 100, "#c43b3b", "2 3");
  lines.forEach((l, i) => {
    const color = PALETTE[i % PALETTE.length];
    line(svg, sc, l.values, color);
    const s = document.createElement("span");
    s.innerHTML = "<i></i>";
    s.firstChild.style.background = color;
    s.appendChild(document.createTextNode(l.name));
    legend.appendChild(s);
  });
}
function drawWorst() {
  const body = document.querySelector("#worst tbody"), t = team();
  body.replaceChildren();
  const rows = D.worst.filter((w) => t < 0 || w.team === D.teams[t]).slice(0, 50);
  for (const w of rows) {
    const tr = document.createElement("tr");
    const cells = [w.task, w.team, duration(w.wait), clock(w.submitted), w.admitted === null ? "still pending" : clock(w.admitted), w.reason, w.message];
    cells.forEach((c, i) => {
      const td = document.createElement("td");
      td.textContent = c;
      if (i === 2) td.className = "num";
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
}
function draw() {
  drawUsage();
  drawPending();
  drawWaits();
  drawPreemptions();
  drawUtilization();
  drawWorst();
  document.body.setAttribute("data-team", team() >= 0 ? D.teams[team()] : "");
}

const select = document.getElementById("team");
D.teams.forEach((name, i) => {
  const o = document.createElement("option");
  o.value = i;
  o.textContent = name;
  select.appendChild(o);
});
select.addEventListener("change", draw);
document.getElementById("span").textContent = "from " + clock(D.origin) + " to " + clock(D.end) + " (" + duration(D.end - D.origin) + "), " + D.teams.length + " teams";
document.getElementById("bucket-note").textContent = D.buckets + " time buckets of " + duration(D.width);
draw();
</script>
</body>
</html>
)page";

}  // namespace

std::string report_json(const ReportData& data) {
  JsonWriter w(/*indented=*/false);
  w.begin_object();
  w.field("policy", data.policy);
  w.field("origin", data.origin);
  w.field("epoch", data.epoch);
  w.field("width", data.width);
  w.field("buckets", static_cast<uint64_t>(data.buckets));
  w.field("end", data.end);
  w.key("teams");
  w.begin_array();
  for (const std::string& t : data.teams) w.string(t);
  w.end_array();
  w.key("flavors");
  w.begin_array();
  for (const std::string& f : data.flavors) w.string(f);
  w.end_array();
  w.key("usage");
  w.begin_array();
  for (const ReportData::Series& s : data.usage) {
    w.begin_object();
    w.field("team", static_cast<uint64_t>(s.team));
    w.field("flavor", static_cast<uint64_t>(s.flavor));
    w.field("resource", resource_name(s.resource));
    w.key("nominal");
    w.decimal(decimal_text(display(s.resource, s.nominal)));
    w.key("limit");
    if (s.borrowing_limit == kUnlimited) {
      w.null();
    } else {
      w.decimal(decimal_text(display(s.resource, s.borrowing_limit)));
    }
    w.key("own");
    numbers(w, s.own);
    w.key("borrowed");
    numbers(w, s.borrowed);
    w.end_object();
  }
  w.end_array();
  w.key("pending");
  w.begin_array();
  for (const std::vector<double>& p : data.pending) numbers(w, p);
  w.end_array();
  w.key("waitBins");
  numbers(w, wait_bins());
  w.key("waits");
  w.begin_array();
  for (const std::vector<uint64_t>& histogram : data.waits) {
    w.begin_array();
    for (uint64_t n : histogram) w.number(n);
    w.end_array();
  }
  w.end_array();
  w.key("percentiles");
  w.begin_array();
  for (const std::array<double, 3>& p : data.percentiles) percentiles(w, p);
  w.end_array();
  w.key("percentilesAll");
  percentiles(w, data.percentiles_all);
  w.key("preemptions");
  w.begin_array();
  for (const ReportData::Preemption& p : data.preemptions) {
    w.begin_array();
    w.number(static_cast<uint64_t>(p.team));
    w.number(static_cast<uint64_t>(p.bucket));
    w.number(static_cast<uint64_t>(p.kind));
    w.number(p.count);
    w.end_array();
  }
  w.end_array();
  w.key("capacity");
  w.begin_array();
  for (const ReportData::Capacity& c : data.capacity) {
    w.begin_object();
    w.field("flavor", static_cast<uint64_t>(c.flavor));
    w.field("resource", resource_name(c.resource));
    w.key("capacity");
    w.decimal(decimal_text(display(c.resource, c.capacity)));
    w.end_object();
  }
  w.end_array();
  w.key("worst");
  w.begin_array();
  for (const WaitRow& row : data.worst) {
    w.begin_object();
    w.field("wait", row.wait);
    w.field("task", row.task);
    w.field("team", row.team);
    w.field("submitted", row.submitted);
    w.key("admitted");
    if (row.admitted) {
      w.number(*row.admitted);
    } else {
      w.null();
    }
    w.field("reason", row.reason);
    w.field("message", row.message);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return support::json_for_script(w.finish());
}

std::string html_report(const ReportData& data) {
  return fill_page(kPage, data.policy.empty() ? std::string("gov simulation report") : "gov simulation report: " + data.policy,
                   report_json(data));
}

}  // namespace gov::report
