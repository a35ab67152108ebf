// Decision output: JSON lines in the fixed key order of docs/interfaces.md, text lines, the
// summary.
#include "runtime/trace/decision_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

#include "compiler/support/json_writer.hpp"
#include "compiler/support/terminal_text.hpp"
#include "compiler/support/utf8.hpp"
#include "runtime/trace/json.hpp"
#include "runtime/trace/units.hpp"

namespace gov::trace {

namespace {

constexpr int64_t kMillisPerHour = 3'600'000;

// ------------------------------------------------------------------ JSON

// Keys and the names of enums (outcomes, reasons, resources) are spelled by this code: printable
// ASCII with nothing to escape, so they go in as they are, without the escaper's scan.
[[maybe_unused]] bool is_literal(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
}

/// Writes one decision's JSON straight into the bytes of the stream's string: room is set aside
/// ahead (a few hundred bytes a line, more when a write needs it), so each key, name and number
/// is a store rather than a std::string append (a replay writes millions of lines). Whatever
/// happens, the string ends where the writing did.
class LineWriter {
 public:
  explicit LineWriter(std::string& out) : out_(out), p_(nullptr), end_(nullptr) { grow(out.size(), kLineRoom); }
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  ~LineWriter() { out_.resize(written()); }

  /// A key or name the code spells (is_literal), quoted.
  void literal(std::string_view text) {
    assert(is_literal(text) && "a key or name the code spells");
    room(text.size() + 2);
    put('"');
    copy(text);
    put('"');
  }
  /// `,"key":`
  void key(std::string_view key) {
    assert(is_literal(key) && "a key the code spells");
    room(key.size() + 4);
    copy(",\"");
    copy(key);
    copy("\":");
  }
  void text(std::string_view text) {  // code-spelled punctuation
    room(text.size());
    copy(text);
  }
  void string(std::string_view value) {
    room(kJsonEscapeGrowth * value.size() + 2);
    p_ = write_json_string(p_, value);
  }
  void string_member(std::string_view key_name, std::string_view value) {
    key(key_name);
    string(value);
  }
  void literal_member(std::string_view key_name, std::string_view name) {
    key(key_name);
    literal(name);
  }
  void number(int64_t value) {
    const fmt::format_int digits(value);
    text(std::string_view(digits.data(), digits.size()));
  }
  void seconds(gov::Time millis) {
    room(kMaxSecondsText);
    p_ = write_seconds(p_, millis);
  }
  /// An amount in the trace's units (format_amount; a whole number of units is its digits).
  void amount(ir::Resource resource, ir::Amount amount) {
    if (const std::optional<uint64_t> whole = whole_file_units(resource, amount)) {
      number(static_cast<int64_t>(*whole));  // at most the amount: it fits
      return;
    }
    text(format_amount(resource, amount));
  }

 private:
  static constexpr size_t kLineRoom = 512;   // most lines fit: one grow a line

  size_t written() const { return p_ == nullptr ? out_.size() : static_cast<size_t>(p_ - out_.data()); }
  void room(size_t bytes) {
    if (static_cast<size_t>(end_ - p_) < bytes) [[unlikely]] grow(written(), std::max(bytes, kLineRoom));
  }
  [[gnu::noinline]] void grow(size_t at, size_t bytes) {
    out_.resize(at + bytes);
    p_ = out_.data() + at;
    end_ = out_.data() + out_.size();
  }
  void put(char c) { *p_++ = c; }
  void copy(std::string_view text) {
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }

  std::string& out_;
  char* p_;
  char* end_;
};

void write_resources(LineWriter& w, std::string_view key, const gov::ResourceAmounts& amounts) {
  w.key(key);
  w.text("{");
  for (size_t i = 0; i < amounts.size(); ++i) {
    if (i > 0) w.text(",");
    if (!amounts[i].partition.empty()) {  // GPU partitions of a profile: a count
      w.string(amounts[i].partition);
      w.text(":");
      w.number(amounts[i].amount);
      continue;
    }
    w.literal(ir::resource_key(amounts[i].resource));
    w.text(":");
    w.amount(amounts[i].resource, amounts[i].amount);
  }
  w.text("}");
}

void write_warnings(LineWriter& w, const std::vector<gov::RuleWarning>& warnings) {
  w.key("warnings");
  w.text("[");
  for (size_t i = 0; i < warnings.size(); ++i) {
    w.text(i > 0 ? ",{" : "{");
    w.literal("rule");
    w.text(":");
    w.string(warnings[i].rule);
    w.string_member("message", warnings[i].message);
    w.text("}");
  }
  w.text("]");
}

// `"pod_sets":[{"name":"worker","flavor":"ml.p5.48xlarge","pods":3,"usage":{...}}]`.
void write_pod_sets(LineWriter& w, const std::vector<gov::PodSetAdmission>& pod_sets) {
  w.key("pod_sets");
  w.text("[");
  for (size_t i = 0; i < pod_sets.size(); ++i) {
    w.text(i > 0 ? ",{" : "{");
    w.literal("name");
    w.text(":");
    w.string(pod_sets[i].name);
    w.string_member("flavor", pod_sets[i].flavor);
    w.key("pods");
    w.number(pod_sets[i].pods);
    write_resources(w, "usage", pod_sets[i].usage);
    w.text("}");
  }
  w.text("]");
}

void write_victims(LineWriter& w, const std::vector<std::string>& victims) {
  w.key("victims");
  w.text("[");
  for (size_t i = 0; i < victims.size(); ++i) {
    if (i > 0) w.text(",");
    w.string(victims[i]);
  }
  w.text("]");
}

void write_outcome_members(LineWriter& w, const gov::Decision& d) {
  switch (d.outcome) {
    case gov::Outcome::admitted:
      w.string_member("flavor", d.flavor);
      write_resources(w, "usage", d.usage);
      write_resources(w, "borrowed", d.borrowed);
      if (!d.pod_sets.empty()) write_pod_sets(w, d.pod_sets);
      if (!d.warnings.empty()) write_warnings(w, d.warnings);
      break;
    case gov::Outcome::pending:
      if (d.reason) w.literal_member("reason", gov::reason_name(*d.reason));
      if (!d.short_of.empty()) write_resources(w, "short", d.short_of);
      if (!d.maximum.empty()) write_resources(w, "max", d.maximum);
      if (!d.victims.empty()) write_victims(w, d.victims);
      break;
    case gov::Outcome::preempted:
      w.string_member("by", d.by);
      w.literal_member("kind", gov::preemption_kind_name(d.kind.value_or(PreemptionKind::in_team)));
      break;
    case gov::Outcome::rejected:
      w.string_member("rule", d.rule);
      break;
    case gov::Outcome::finished:
    case gov::Outcome::cancelled:
      return;  // no message either
    case gov::Outcome::invalid:
      break;
  }
  w.string_member("message", d.message);
}

// ------------------------------------------------------------------ text

// Text for a one-line format, safe on a terminal and in a CI log: every character
// escape_for_terminal escapes (controls, bidirectional overrides, invisible characters) as its
// readable escape (`\n`, `\x1b`, `\u{202e}`: a policy's message or a trace's task id must not
// reorder or hide what the line shows; docs/security.md), invalid UTF-8 replaced by U+FFFD.
std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_code_point(text, [&](std::string_view sequence, uint32_t code_point) {
    if (is_unsafe_for_terminal(code_point)) out += escape_code_point(code_point);
    else out += sequence;
  });
  return out;
}

// "gpu 2, vcpu 64, memory 256 GiB".
std::string resources_text(const gov::ResourceAmounts& amounts) {
  std::string out;
  for (const auto& [resource, amount, partition] : amounts) {
    if (!out.empty()) out += ", ";
    if (!partition.empty()) {
      out += fmt::format("{} {}", partition, amount);
      continue;
    }
    const std::string value = format_amount(resource, amount);
    out += fmt::format("{} {}{}", model::display_name(resource), value, resource == ir::Resource::memory ? " GiB" : "");
  }
  return out;
}

// The resources of one assignment by name: "vcpu", "vcpu and memory".
std::string resource_names(const gov::ResourceAmounts& amounts) {
  std::string out;
  for (const auto& [resource, amount, partition] : amounts) {
    if (!out.empty()) out += " and ";
    if (!partition.empty()) out += partition;
    else out += model::display_name(resource);
  }
  return out;
}

// `master on ml.m5.xlarge (1 pod), worker on ml.p5.48xlarge (3 pods)`. A pod set whose resource
// groups took several flavors is one entry listing each flavor with what it gives:
// `main on ml.c5.2xlarge for vcpu, ml.c5.xlarge for memory (1 pod)`.
std::string pod_sets_text(const std::vector<gov::PodSetAdmission>& pod_sets) {
  std::string out;
  for (size_t i = 0; i < pod_sets.size();) {
    size_t end = i + 1;
    while (end < pod_sets.size() && pod_sets[end].name == pod_sets[i].name) ++end;
    if (i > 0) out += ", ";
    out += fmt::format("{} on ", one_line(pod_sets[i].name));
    for (size_t k = i; k < end; ++k) {
      if (k > i) out += ", ";
      out += one_line(pod_sets[k].flavor);
      if (end - i > 1) out += " for " + resource_names(pod_sets[k].usage);
    }
    out += fmt::format(" ({} pod{})", pod_sets[i].pods, pod_sets[i].pods == 1 ? "" : "s");
    i = end;
  }
  return out;
}

std::string admitted_text(const gov::Decision& d) {
  std::string out = fmt::format("admitted on {}", one_line(d.flavor));
  if (!d.pod_sets.empty()) out = "admitted: " + pod_sets_text(d.pod_sets);
  if (!d.usage.empty()) out += "  " + resources_text(d.usage);
  if (!d.borrowed.empty()) out += "  borrowing " + resources_text(d.borrowed);
  for (const gov::RuleWarning& warning : d.warnings) {
    out += fmt::format("  warning {}: {}", one_line(warning.rule), one_line(warning.message));
  }
  return out;
}

std::string pending_text(const gov::Decision& d) {
  std::string details = d.reason ? std::string(gov::reason_name(*d.reason)) : "no reason";
  if (!d.short_of.empty()) details += "; short " + resources_text(d.short_of);
  if (!d.maximum.empty()) details += "; max " + resources_text(d.maximum);
  if (!d.victims.empty()) {
    details += "; victims ";
    for (size_t i = 0; i < d.victims.size(); ++i)
      details += (i > 0 ? ", " : "") + one_line(d.victims[i]);
  }
  return fmt::format("pending ({})  {}", details, one_line(d.message));
}

std::string outcome_text(const gov::Decision& d) {
  switch (d.outcome) {
    case gov::Outcome::admitted:
      return admitted_text(d);
    case gov::Outcome::pending:
      return pending_text(d);
    case gov::Outcome::preempted:
      return fmt::format("preempted by {} ({})  {}", one_line(d.by),
                         gov::preemption_kind_name(d.kind.value_or(PreemptionKind::in_team)), one_line(d.message));
    case gov::Outcome::rejected:
      return fmt::format("rejected by rule {}  {}", one_line(d.rule), one_line(d.message));
    case gov::Outcome::finished:
      return "finished";
    case gov::Outcome::cancelled:
      return "cancelled";
    case gov::Outcome::invalid:
      return fmt::format("invalid  {}", one_line(d.message));
  }
  return "?";
}

// ------------------------------------------------------------------ summary table

std::string wait_text(const std::optional<gov::Time>& wait) { return wait ? duration_text(*wait) : "-"; }

// Device-milliseconds as device-hours with three decimals, rounded half up.
std::string device_hours_text(int64_t device_millis) {
  int64_t milli_hours =
      (std::max<int64_t>(device_millis, 0) + kMillisPerHour / 2000) / (kMillisPerHour / 1000);
  return fmt::format("{}.{:03}", milli_hours / 1000, milli_hours % 1000);
}

using SummaryRow = std::vector<std::string>;

SummaryRow summary_header(bool neuron) {
  SummaryRow header = {"team",      "submitted", "admitted",  "rejected",           "pending", "oldest pending",
                       "mean wait", "p95 wait",  "GPU-hours", "borrowed GPU-hours"};
  if (neuron) header.insert(header.end(), {"Neuron-hours", "borrowed Neuron-hours"});
  header.insert(header.end(), {"preempted", "preemptions caused"});
  return header;
}

SummaryRow summary_row(const TeamSummary& t, bool neuron) {
  SummaryRow row = {one_line(t.team),
                    std::to_string(t.submitted),
                    std::to_string(t.admitted),
                    std::to_string(t.rejected),
                    std::to_string(t.pending),
                    wait_text(t.oldest_pending),
                    wait_text(t.mean_wait),
                    wait_text(t.p95_wait),
                    device_hours_text(t.gpu_millis),
                    device_hours_text(t.borrowed_gpu_millis)};
  if (neuron) row.insert(row.end(), {device_hours_text(t.neuron_millis), device_hours_text(t.borrowed_neuron_millis)});
  row.insert(row.end(), {std::to_string(t.preempted), std::to_string(t.preemptions_caused)});
  return row;
}

// Display width, counted in code points (as columns are everywhere in gov).
size_t text_width(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return !is_utf8_continuation(static_cast<unsigned char>(c));
  }));
}

std::string padding(std::string_view text, size_t width) {
  return std::string(width - std::min(width, text_width(text)), ' ');
}

// The team column is left-aligned, the figures right-aligned, columns two spaces apart.
std::string table_line(const SummaryRow& row, const std::vector<size_t>& widths) {
  std::string out = row[0] + padding(row[0], widths[0]);
  for (size_t i = 1; i < row.size(); ++i) out += "  " + padding(row[i], widths[i]) + row[i];
  return out + "\n";
}

}  // namespace

// ------------------------------------------------------------------ public writers

void append_decision_json(std::string& out, const gov::Decision& decision) {
  LineWriter w(out);
  w.text("{\"at\":");
  w.seconds(decision.at);
  w.string_member("task", decision.task);
  w.literal_member("outcome", gov::outcome_name(decision.outcome));
  w.string_member("team", decision.team);
  write_outcome_members(w, decision);
  w.text("}");
}

std::string decision_json(const gov::Decision& decision) {
  std::string out;
  append_decision_json(out, decision);
  return out;
}

std::string decision_text(const gov::Decision& decision) {
  return fmt::format("{:>5}  {}  {}  {}", format_seconds(decision.at) + "s",
                     one_line(decision.task), one_line(decision.team), outcome_text(decision));
}

std::string summary_text(const std::vector<TeamSummary>& teams) {
  const bool neuron = std::any_of(teams.begin(), teams.end(), [](const TeamSummary& t) { return t.neuron_millis > 0; });
  const SummaryRow header = summary_header(neuron);
  std::vector<size_t> widths;
  for (const std::string& title : header) widths.push_back(text_width(title));
  std::vector<SummaryRow> rows;
  for (const TeamSummary& team : teams) {
    rows.push_back(summary_row(team, neuron));
    for (size_t i = 0; i < widths.size(); ++i) widths[i] = std::max(widths[i], text_width(rows.back()[i]));
  }
  std::string out = table_line(header, widths);
  for (const SummaryRow& row : rows) out += table_line(row, widths);
  return out;
}

std::string duration_text(gov::Time millis) {
  if (millis < 0) return "-" + duration_text(-millis);
  constexpr gov::Time kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;
  if (millis < kMinute) return format_seconds(millis) + "s";
  if (millis < kHour) return fmt::format("{}m {:02}s", millis / kMinute, millis % kMinute / 1000);
  if (millis < kDay) return fmt::format("{}h {:02}m", millis / kHour, millis % kHour / kMinute);
  return fmt::format("{}d {}h", millis / kDay, millis % kDay / kHour);
}

// ------------------------------------------------------------------ SummaryBuilder


size_t SummaryBuilder::team_slot(const std::string& name) {
  auto [it, inserted] = team_slots_.emplace(name, teams_.size());
  if (inserted) teams_.emplace_back().summary.team = name;
  return it->second;
}

namespace {

/// Adds an interval of the clock to a team's summary.
void add_interval(TeamSummary& team, gov::Time from, gov::Time to, const ResourceArray& held, const ResourceArray& borrowed) {
  const gov::Time span = to - from;
  team.gpu_millis += held[static_cast<size_t>(gov::Resource::gpu)] * span;
  team.borrowed_gpu_millis += borrowed[static_cast<size_t>(gov::Resource::gpu)] * span;
  team.neuron_millis += held[static_cast<size_t>(gov::Resource::neuron)] * span;
  team.borrowed_neuron_millis += borrowed[static_cast<size_t>(gov::Resource::neuron)] * span;
}

}  // namespace

void SummaryBuilder::release(LiveTask& task, gov::Time at) {
  const std::string& team = teams_[task.team].summary.team;
  for (Holding& h : task.holding) {
    for (int64_t& amount : h.amounts) amount = -amount;
    clock_.change(team, h.flavor, h.amounts, at, [&](const std::string& t, const std::string&, gov::Time from, gov::Time to,
                                                     const ResourceArray& held, const ResourceArray& borrowed) {
      add_interval(teams_[team_slots_.at(t)].summary, from, to, held, borrowed);
    });
  }
  task.holding.clear();
}

void SummaryBuilder::admit(LiveTask& task, const gov::Decision& decision) {
  release(task, decision.at);  // an admission while admitted (not expected) restarts the interval
  if (!task.admitted_once) {
    task.admitted_once = true;
    ++teams_[task.team].summary.admitted;
    teams_[task.team].waits.add(decision.at - task.submitted);
  }
  task.holding = holdings_of(decision);
  const std::string& team = teams_[task.team].summary.team;
  for (const Holding& h : task.holding) {
    clock_.change(team, h.flavor, h.amounts, decision.at, [&](const std::string& t, const std::string&, gov::Time from,
                                                              gov::Time to, const ResourceArray& held, const ResourceArray& borrowed) {
      add_interval(teams_[team_slots_.at(t)].summary, from, to, held, borrowed);
    });
  }
}

void SummaryBuilder::add(const gov::Decision& decision) {
  last_ = std::max(last_, decision.at);
  size_t slot = team_slot(decision.team);
  auto [it, inserted] = live_.try_emplace(decision.task);
  LiveTask& task = it->second;
  if (inserted) {
    task.team = slot;
    task.submitted = decision.at;
    ++teams_[slot].summary.submitted;
  }
  switch (decision.outcome) {
    case gov::Outcome::admitted:
      admit(task, decision);
      return;
    case gov::Outcome::pending:
      return;
    case gov::Outcome::preempted: {
      release(task, decision.at);
      ++teams_[task.team].summary.preempted;
      auto by = live_.find(decision.by);
      if (by != live_.end()) ++teams_[by->second.team].summary.preemptions_caused;
      return;
    }
    case gov::Outcome::rejected:
      ++teams_[task.team].summary.rejected;
      release(task, decision.at);
      live_.erase(it);
      return;
    case gov::Outcome::invalid:
    case gov::Outcome::finished:
    case gov::Outcome::cancelled:
      release(task, decision.at);
      live_.erase(it);
      return;
  }
}

std::vector<TeamSummary> SummaryBuilder::summarize(std::optional<gov::Time> end) const {
  gov::Time until = end.value_or(last_);
  std::vector<TeamSummary> out;
  out.reserve(teams_.size());
  for (const TeamTotals& totals : teams_) {
    out.push_back(totals.summary);
    out.back().mean_wait = totals.waits.mean();
    out.back().p95_wait = totals.waits.p95();
  }
  for (const auto& [id, task] : live_) {
    if (!task.holding.empty()) continue;
    TeamSummary& team = out[task.team];
    ++team.pending;
    const gov::Time age = std::max<gov::Time>(0, until - task.submitted);
    team.oldest_pending = std::max(team.oldest_pending.value_or(0), age);
  }
  clock_.charge_until(until, [&](const std::string& t, const std::string&, gov::Time from, gov::Time to,
                                 const ResourceArray& held, const ResourceArray& borrowed) {
    add_interval(out[team_slots_.at(t)], from, to, held, borrowed);
  });
  return out;
}

}  // namespace gov::trace
