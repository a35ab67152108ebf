// What-if comparison of two replays of one trace: per-team figures, changed tasks, and their
// text, JSON and HTML forms.
#include "runtime/report/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "compiler/model/quantities.hpp"
#include "compiler/support/json_writer.hpp"
#include "compiler/support/markup.hpp"
#include "runtime/report/page.hpp"

namespace gov::report {

namespace {

constexpr int64_t kMillisPerHour = 3'600'000;

std::string hours_text(int64_t gpu_millis) {
  return model::format_decimal(gpu_millis, kMillisPerHour, 3);
}

std::string seconds_text(std::optional<double> seconds) {
  if (!seconds) return "-";
  return fmt::format("{:.1f}", *seconds);
}

std::string signed_text(double delta, int digits) {
  if (std::fabs(delta) < 0.5 * std::pow(10.0, -digits)) return "0";
  return fmt::format("{:+.{}f}", delta, digits);
}

/// A finite number as JSON decimal text, at most 3 decimals.
std::string decimal_text(double value) {
  if (!std::isfinite(value)) return "0";
  const double rounded = std::round(value * 1000.0) / 1000.0;
  if (rounded == std::trunc(rounded) && std::fabs(rounded) < 9.0e15) return fmt::format("{}", static_cast<int64_t>(rounded));
  std::string text = fmt::format("{:.3f}", rounded);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

bool changed(const TaskOutcome& a, const TaskOutcome& b) {
  return a.last != b.last || a.rule != b.rule || a.first_admitted.has_value() != b.first_admitted.has_value() ||
         a.preemptions != b.preemptions;
}

/// Per-team figures of one replay, by team name.
/// Per-team figures of one replay, by team name, with what is still held counted until `end`:
/// the same end for both replays (the later of their last decisions), or a team whose tasks
/// were decided alike would differ by the other replay's longer tail.
std::unordered_map<std::string, TeamFigures> figures_of(const RunOutcomes& run, Time end) {
  std::unordered_map<std::string, TeamFigures> out;
  std::unordered_map<std::string, std::vector<Time>> waits;
  for (const auto& [id, task] : run.tasks()) {
    TeamFigures& team = out[task.team];
    if (!task.first_admitted) {
      if (task.last == Outcome::pending) ++team.never_admitted;
      if (task.last == Outcome::pending && task.reason == PendingReason::exceeds_max_quota) ++team.never_fit;
      continue;
    }
    ++team.admitted;
    waits[task.team].push_back(std::max<Time>(0, *task.first_admitted - task.submitted));
  }
  for (const UsageRow& row : run.recorder().usage(end)) {
    TeamFigures& team = out[row.team];
    team.gpu_millis += row.used[0];
    team.borrowed_gpu_millis += row.borrowed[0];
    team.preempted += static_cast<uint64_t>(row.preempted);
  }
  for (auto& [name, list] : waits) {
    TeamFigures& team = out[name];
    double sum = 0;
    for (Time w : list) sum += static_cast<double>(w);
    team.mean_wait = sum / static_cast<double>(list.size()) / 1000.0;
    const size_t rank = (list.size() * 95 + 99) / 100;
    std::nth_element(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(rank - 1), list.end());
    team.p95_wait = static_cast<double>(list[rank - 1]) / 1000.0;
  }
  return out;
}

void figures_json(JsonWriter& w, const TeamFigures& f) {
  w.begin_object();
  w.field("admitted", f.admitted);
  w.field("never_admitted", f.never_admitted);
  w.field("never_fit", f.never_fit);
  w.key("mean_wait_s");
  if (f.mean_wait) {
    w.decimal(decimal_text(*f.mean_wait));
  } else {
    w.null();
  }
  w.key("p95_wait_s");
  if (f.p95_wait) {
    w.decimal(decimal_text(*f.p95_wait));
  } else {
    w.null();
  }
  w.key("gpu_hours");
  w.decimal(model::format_decimal(f.gpu_millis, kMillisPerHour, 6));
  w.key("borrowed_gpu_hours");
  w.decimal(model::format_decimal(f.borrowed_gpu_millis, kMillisPerHour, 6));
  w.field("preempted", f.preempted);
  w.end_object();
}

void outcome_json(JsonWriter& w, const TaskOutcome& o) {
  w.begin_object();
  w.field("outcome", outcome_name(o.last));
  w.field("describe", o.describe());
  w.key("first_admitted");
  if (o.first_admitted) {
    w.number(*o.first_admitted);
  } else {
    w.null();
  }
  w.field("preemptions", uint64_t{o.preemptions});
  if (!o.rule.empty()) w.field("rule", o.rule);
  if (o.last == Outcome::pending && o.reason) w.field("reason", reason_name(*o.reason));
  w.end_object();
}

constexpr std::string_view kPage = R"page(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>@TITLE@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 40px; color: #1d2430; background: #fafbfc; }
h1 { font-size: 20px; margin: 18px 0 4px; }
h2 { font-size: 16px; margin: 24px 0 6px; }
.note { color: #5b6472; font-size: 12px; white-space: pre-line; }
.controls { position: sticky; top: 0; background: #fafbfc; padding: 8px 0; border-bottom: 1px solid #dde1e6; }
.grid { display: flex; flex-wrap: wrap; gap: 12px; }
.panel { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 8px; }
.panel h3 { font-size: 13px; margin: 0 0 4px; }
svg.chart { display: block; width: 420px; }
table { border-collapse: collapse; font-size: 12px; background: #fff; }
th, td { border: 1px solid #dde1e6; padding: 3px 6px; text-align: left; }
td.num { text-align: right; white-space: nowrap; }
.axis { font-size: 10px; fill: #5b6472; }
</style>
</head>
<body>
<h1>@TITLE@</h1>
<div class="note" id="summary"></div>
<div class="controls"><label>Team <select id="team"><option value="-1">all teams</option></select></label></div>
<h2>Per team: B &minus; A</h2>
<div class="grid">
<div class="panel"><h3>mean wait (s)</h3><svg class="chart" id="d-wait" data-chart="wait"></svg></div>
<div class="panel"><h3>GPU-hours</h3><svg class="chart" id="d-gpu" data-chart="gpu"></svg></div>
<div class="panel"><h3>borrowed GPU-hours</h3><svg class="chart" id="d-borrowed" data-chart="borrowed"></svg></div>
<div class="panel"><h3>preemptions suffered</h3><svg class="chart" id="d-preempted" data-chart="preempted"></svg></div>
</div>
<h2>Teams</h2>
<div class="note" id="starved"></div>
<table id="teams"><thead><tr><th>team</th><th>admitted A</th><th>B</th><th>never ran A</th><th>B</th><th>mean wait A (s)</th><th>B</th><th>p95 wait A (s)</th><th>B</th><th>GPU-h A</th><th>B</th><th>borrowed GPU-h A</th><th>B</th><th>preempted A</th><th>B</th></tr></thead><tbody></tbody></table>
<h2>Tasks whose outcome changed</h2>
<div class="note" id="changed-note"></div>
<table id="changed"><thead><tr><th>task</th><th>team</th><th>with A</th><th>with B</th></tr></thead><tbody></tbody></table>
<script type="application/json" id="data">@DATA@</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const NS = document.getElementById("d-wait").namespaceURI;
function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function team() { return Number(document.getElementById("team").value); }
// values(x): the team's B - A, or null when either side has none (no task admitted); warn(x): a
// caution drawn with the bar (amber, its text after the value) instead of its red or green.
function bars(svg, values, warn) {
  svg.replaceChildren();
  const t = team();
  const rows = D.teams.map((x, i) => ({name: x.team, v: values(x), w: warn ? warn(x) : "", i})).filter((r) => t < 0 || r.i === t);
  const rowH = 16, W = 420, L = 110, R = 50, H = Math.max(1, rows.length) * rowH + 20;
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  svg.setAttribute("height", H);
  const top = Math.max(1e-9, ...rows.map((r) => Math.abs(r.v || 0)));
  const mid = L + (W - L - R) / 2, half = (W - L - R) / 2;
  el("line", {x1: mid, x2: mid, y1: 0, y2: H - 16, stroke: "#9aa3ad"}, svg);
  rows.forEach((r, k) => {
    const y = k * rowH + 2, w = half * Math.abs(r.v || 0) / top;
    const label = el("text", {x: L - 4, y: y + 11, "text-anchor": "end", class: "axis"}, svg);
    label.textContent = r.name;
    const fill = r.w ? "#d08c00" : r.v > 0 ? "#c43b3b" : r.v < 0 ? "#2f9e6e" : "#9aa3ad";
    if (r.v !== null) el("rect", {x: r.v < 0 ? mid - w : mid, y, width: Math.max(1, w), height: rowH - 4, fill, "data-team": r.name}, svg);
    const value = el("text", {x: W - 2, y: y + 11, "text-anchor": "end", class: "axis"}, svg);
    value.textContent = (r.v === null ? "n/a" : (r.v > 0 ? "+" : "") + Math.round(r.v * 1000) / 1000) + (r.w ? " " + r.w : "");
  });
  const axis = el("text", {x: mid, y: H - 4, "text-anchor": "middle", class: "axis"}, svg);
  axis.textContent = "B \u2212 A (red: more with B)";
}
function cell(tr, text, num) {
  const td = document.createElement("td");
  td.textContent = text === null ? "-" : text;
  if (num) td.className = "num";
  tr.appendChild(td);
}
function draw() {
  const t = team();
  // Waits count admitted tasks only: a team whose tasks B never runs had its missing wait read as
  // 0, a green "improvement" (an SRE helper's finding). No wait on either side is n/a, and more
  // tasks never run in B is a caution on the bar.
  bars(document.getElementById("d-wait"),
       (x) => x.a.mean_wait_s === null || x.b.mean_wait_s === null ? null : x.b.mean_wait_s - x.a.mean_wait_s,
       (x) => x.b.never_admitted > x.a.never_admitted ? "(" + (x.b.never_admitted - x.a.never_admitted) + " more never ran)" : "");
  bars(document.getElementById("d-gpu"), (x) => x.b.gpu_hours - x.a.gpu_hours);
  bars(document.getElementById("d-borrowed"), (x) => x.b.borrowed_gpu_hours - x.a.borrowed_gpu_hours);
  bars(document.getElementById("d-preempted"), (x) => x.b.preempted - x.a.preempted);
  const body = document.querySelector("#teams tbody");
  body.replaceChildren();
  D.teams.forEach((x, i) => {
    if (t >= 0 && i !== t) return;
    const tr = document.createElement("tr");
    cell(tr, x.team);
    for (const k of ["admitted", "never_admitted", "mean_wait_s", "p95_wait_s", "gpu_hours", "borrowed_gpu_hours", "preempted"]) {
      cell(tr, x.a[k], true);
      cell(tr, x.b[k], true);
    }
    body.appendChild(tr);
  });
  const changed = document.querySelector("#changed tbody");
  changed.replaceChildren();
  const name = t >= 0 ? D.teams[t].team : null;
  for (const c of D.changed) {
    if (name !== null && c.team !== name) continue;
    const tr = document.createElement("tr");
    cell(tr, c.task);
    cell(tr, c.team);
    cell(tr, c.a.describe);
    cell(tr, c.b.describe);
    changed.appendChild(tr);
  }
  document.body.setAttribute("data-team", name === null ? "" : name);
}
const select = document.getElementById("team");
D.teams.forEach((x, i) => {
  const o = document.createElement("option");
  o.value = i;
  o.textContent = x.team;
  select.appendChild(o);
});
select.addEventListener("change", draw);
document.getElementById("summary").textContent = "A: " + D.policy_a + " \u2014 B: " + D.policy_b + " \u2014 " + D.tasks + " tasks, " + D.changed_total + " changed outcome";
document.getElementById("starved").textContent = D.teams.filter((x) => x.b.never_admitted > x.a.never_admitted)
  .map((x) => "note: " + x.team + " has more tasks that never ran in B; waits count admitted tasks only, so B's waits leave them out" +
    (x.b.never_fit > x.a.never_fit ? "; " + x.b.never_fit + " of them can never run (exceeds-max-quota: larger than its quota and what it may borrow)" : ""))
  .join("\n");
document.getElementById("changed-note").textContent = D.changed.length < D.changed_total ? "the first " + D.changed.length + " of " + D.changed_total : "";
draw();
</script>
</body>
</html>
)page";

}  // namespace

std::string TaskOutcome::describe() const {
  std::string text;
  switch (last) {
    case Outcome::admitted: text = "admitted at the end"; break;
    case Outcome::pending:
      text = "pending at the end";
      // Why, in the stream's words: a task larger than its team may ever hold is not a long queue
      // (an SRE helper's finding: "what changes if we move 8 H100s" had no answer here).
      if (reason == PendingReason::exceeds_max_quota) {
        text += " (exceeds-max-quota: it can never run)";
      } else if (reason) {
        text += fmt::format(" ({})", reason_name(*reason));
      }
      break;
    case Outcome::preempted: text = "preempted at the end"; break;
    case Outcome::rejected: text = "rejected by `" + rule + "`"; break;
    case Outcome::finished: text = "finished"; break;
    case Outcome::cancelled: text = first_admitted ? "cancelled after running" : "cancelled while pending"; break;
    case Outcome::invalid: text = "invalid"; break;
  }
  if (first_admitted) text += fmt::format(", waited {:.1f} s", static_cast<double>(*first_admitted - submitted) / 1000.0);
  if (preemptions > 0) text += fmt::format(", preempted {}×", preemptions);
  return text;
}

void RunOutcomes::add(const Decision& d) {
  recorder_.add(d);
  end_ = std::max(end_, d.at);
  auto [it, inserted] = tasks_.try_emplace(d.task);
  TaskOutcome& task = it->second;
  if (inserted) {
    task.team = d.team;
    task.submitted = d.at;
    order_.push_back(d.task);
  }
  task.last = d.outcome;
  switch (d.outcome) {
    case Outcome::admitted:
      if (!task.first_admitted) task.first_admitted = d.at;
      task.flavor = d.flavor;
      return;
    case Outcome::preempted: ++task.preemptions; return;
    case Outcome::rejected: task.rule = d.rule; return;
    case Outcome::finished: task.finished = d.at; return;
    case Outcome::pending: task.reason = d.reason; return;
    case Outcome::cancelled:
    case Outcome::invalid: return;
  }
}

void RunOutcomes::finish(std::optional<Time> end) {
  if (end) end_ = *end;
}

Comparison compare(const RunOutcomes& a, const RunOutcomes& b, std::string policy_a, std::string policy_b) {
  Comparison out;
  out.policy_a = std::move(policy_a);
  out.policy_b = std::move(policy_b);
  const Time end = std::max(a.end(), b.end());
  std::unordered_map<std::string, TeamFigures> fa = figures_of(a, end);
  std::unordered_map<std::string, TeamFigures> fb = figures_of(b, end);
  std::unordered_set<std::string> seen;
  const auto add_team = [&](const std::string& team) {
    if (!seen.insert(team).second) return;
    out.teams.push_back({team, fa[team], fb[team]});
  };
  for (const std::string& id : a.order()) add_team(a.tasks().at(id).team);
  for (const std::string& id : b.order()) add_team(b.tasks().at(id).team);
  std::unordered_set<std::string> listed;
  const auto consider = [&](const std::string& id) {
    if (!listed.insert(id).second) return;
    ++out.tasks;
    auto ia = a.tasks().find(id);
    auto ib = b.tasks().find(id);
    TaskOutcome none;
    none.last = Outcome::invalid;
    const TaskOutcome& oa = ia == a.tasks().end() ? none : ia->second;
    const TaskOutcome& ob = ib == b.tasks().end() ? none : ib->second;
    if (oa.last == Outcome::finished && ob.last == Outcome::finished && oa.finished && ob.finished &&
        *oa.finished != *ob.finished) {
      if (*ob.finished > *oa.finished) {
        ++out.finished_later;
        out.later_by += *ob.finished - *oa.finished;
      } else {
        ++out.finished_earlier;
        out.earlier_by += *oa.finished - *ob.finished;
      }
    }
    if (!changed(oa, ob)) return;
    ++out.changed_total;
    if (out.changed.size() < Comparison::kMaxChangedListed) {
      out.changed.push_back({id, oa.team.empty() ? ob.team : oa.team, oa, ob});
    }
  };
  for (const std::string& id : a.order()) consider(id);
  for (const std::string& id : b.order()) consider(id);
  return out;
}

std::string comparison_text(const Comparison& c) {
  std::string out = fmt::format("A: {}\nB: {}\n\n", c.policy_a, c.policy_b);
  out += fmt::format("{:<20} {:>18} {:>18} {:>24} {:>24} {:>14} {:>16}\n", "team", "mean wait s A→B", "p95 wait s A→B",
                     "GPU-hours A→B", "borrowed GPU-h A→B", "preempted A→B", "never ran A→B");
  std::vector<std::string> starved;  // teams with more tasks never admitted in B: their waits improve

  for (const TeamComparison& t : c.teams) {
    const auto arrow = [](const std::string& a, const std::string& b) { return a + " → " + b; };
    out += fmt::format("{:<20} {:>18} {:>18} {:>24} {:>24} {:>14} {:>16}\n", t.team,
                       arrow(seconds_text(t.a.mean_wait), seconds_text(t.b.mean_wait)),
                       arrow(seconds_text(t.a.p95_wait), seconds_text(t.b.p95_wait)),
                       arrow(hours_text(t.a.gpu_millis), hours_text(t.b.gpu_millis)),
                       arrow(hours_text(t.a.borrowed_gpu_millis), hours_text(t.b.borrowed_gpu_millis)),
                       arrow(fmt::format("{}", t.a.preempted), fmt::format("{}", t.b.preempted)),
                       arrow(fmt::format("{}", t.a.never_admitted), fmt::format("{}", t.b.never_admitted)));
    if (t.b.never_admitted > t.a.never_admitted) starved.push_back(t.team);
    out += fmt::format("{:<20} {:>18} {:>18} {:>24} {:>24} {:>14} {:>16}\n", "  (B − A)",
                       t.a.mean_wait && t.b.mean_wait ? signed_text(*t.b.mean_wait - *t.a.mean_wait, 1) : std::string("-"),
                       t.a.p95_wait && t.b.p95_wait ? signed_text(*t.b.p95_wait - *t.a.p95_wait, 1) : std::string("-"),
                       signed_text(static_cast<double>(t.b.gpu_millis - t.a.gpu_millis) / kMillisPerHour, 3),
                       signed_text(static_cast<double>(t.b.borrowed_gpu_millis - t.a.borrowed_gpu_millis) / kMillisPerHour, 3),
                       signed_text(static_cast<double>(t.b.preempted) - static_cast<double>(t.a.preempted), 0),
                       signed_text(static_cast<double>(t.b.never_admitted) - static_cast<double>(t.a.never_admitted), 0));
  }
  // Waits count admitted tasks only: a task B never runs leaves B's waits, which then look better.
  for (const std::string& team : starved) {
    out += fmt::format("note: {} has more tasks that never ran in B; waits count admitted tasks only, so B's waits "
                       "leave them out\n",
                       team);
  }
  for (const TeamComparison& t : c.teams) {
    if (t.b.never_fit <= t.a.never_fit) continue;
    out += fmt::format("note: {}: {} task{} can never run in B (exceeds-max-quota: larger than its quota and what it may "
                       "borrow), against {} in A\n",
                       t.team, t.b.never_fit, t.b.never_fit == 1 ? "" : "s", t.a.never_fit);
  }
  out += fmt::format("\n{} of {} tasks changed outcome{}\n", c.changed_total, c.tasks,
                     c.changed.size() < c.changed_total ? fmt::format(" (the first {} listed)", c.changed.size()) : "");
  if (c.finished_later + c.finished_earlier > 0) {
    const auto average = [](Time total, size_t n) { return static_cast<double>(total) / static_cast<double>(n) / 1000.0; };
    out += fmt::format("{} finished later in B{}, {} earlier{} (tasks that finished in both)\n", c.finished_later,
                       c.finished_later ? fmt::format(" (by {:.1f} s on average)", average(c.later_by, c.finished_later)) : "",
                       c.finished_earlier,
                       c.finished_earlier ? fmt::format(" (by {:.1f} s on average)", average(c.earlier_by, c.finished_earlier))
                                          : "");
  }
  for (const ChangedTask& t : c.changed) {
    out += fmt::format("  {}  {}  A: {}  B: {}\n", t.task, t.team, t.a.describe(), t.b.describe());
  }
  return out;
}

std::string comparison_json(const Comparison& c) {
  JsonWriter w(/*indented=*/false);
  w.begin_object();
  w.field("policy_a", c.policy_a);
  w.field("policy_b", c.policy_b);
  w.field("tasks", static_cast<uint64_t>(c.tasks));
  w.field("changed_total", static_cast<uint64_t>(c.changed_total));
  w.field("finished_later", static_cast<uint64_t>(c.finished_later));
  w.field("finished_earlier", static_cast<uint64_t>(c.finished_earlier));
  w.key("finished_later_by_s");  // mean, seconds; null when none
  c.finished_later ? w.decimal(decimal_text(static_cast<double>(c.later_by) / static_cast<double>(c.finished_later) / 1000.0))
                   : w.null();
  w.key("finished_earlier_by_s");
  c.finished_earlier
      ? w.decimal(decimal_text(static_cast<double>(c.earlier_by) / static_cast<double>(c.finished_earlier) / 1000.0))
      : w.null();
  w.key("teams");
  w.begin_array();
  for (const TeamComparison& t : c.teams) {
    w.begin_object();
    w.field("team", t.team);
    w.key("a");
    figures_json(w, t.a);
    w.key("b");
    figures_json(w, t.b);
    w.end_object();
  }
  w.end_array();
  w.key("changed");
  w.begin_array();
  for (const ChangedTask& t : c.changed) {
    w.begin_object();
    w.field("task", t.task);
    w.field("team", t.team);
    w.key("a");
    outcome_json(w, t.a);
    w.key("b");
    outcome_json(w, t.b);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.finish();
}

std::string comparison_html(const Comparison& c) {
  return fill_page(kPage, "gov what-if: " + c.policy_a + " vs " + c.policy_b,
                   support::json_for_script(comparison_json(c)));
}

}  // namespace gov::report
