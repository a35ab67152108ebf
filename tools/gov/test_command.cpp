// `gov test`: run the `test` blocks of policy files through the engine.
// The running and matching live in runtime/policy_test/; this selects, prints and reports them
// (text for people, JSON for tools, JUnit XML for CI test reports).
#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "compiler/diagnostics/render.hpp"
#include "compiler/support/json_writer.hpp"
#include "compiler/support/markup.hpp"
#include "compiler/support/terminal_text.hpp"
#include "runtime/embed/engine_internals.hpp"
#include "runtime/policy_test/policy_test.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/engine_support.hpp"

namespace gov::cli {
namespace {

/// One block's result with where it was written, for the reports.
struct RanCase {
  policy_test::CaseResult result;
  std::string where;          // "file.gov:12:1"
  std::string failure_where;  // the failing `expect`, "file.gov:15:5"
  std::vector<std::string> stream;  // -v: the block's decisions, one text line each
};

/// A file's blocks, or why it has none to run.
struct RanFile {
  std::string path;
  bool loaded = false;  // false: the file did not check (its diagnostics went to stderr)
  /// When it did not check: why, as `gov check` prints it without colour (the JSON report's
  /// `error`, so that a tool reading it need not scrape standard error).
  std::string error;
  std::vector<RanCase> cases;
};

/// Why a file that was loaded to Stage::check did not check: the read error, or the
/// diagnostics rendered; empty when it checked.
std::string check_failure(const driver::Result& checked) {
  if (!checked.ok()) return checked.error->message;
  const CheckedPolicy& policy = checked.policy->checked;
  if (policy.ok()) return {};
  return render_all(policy.diagnostics(), policy.program.sources);
}

/// The failure report of a block as `gov test` prints it (before escaping): where, the
/// expectation, what differs, the decision it was matched against, and the decisions since the
/// previous `expect` (the stream the expectation was read against).
std::string failure_report(const RanCase& ran) {
  const policy_test::Failure& failure = *ran.result.failure;
  std::string out = fmt::format("  {}: expected {}\n    but {}", ran.failure_where, failure.expected, failure.actual);
  out += failure.decision ? fmt::format(":\n      {}\n", *failure.decision) : "\n";
  if (!failure.recent.empty()) {
    out += "    decisions since the previous expect:\n";
    for (const std::string& line : failure.recent) out += fmt::format("      {}\n", line);
  }
  return out;
}

RanCase run_one(const gov::Engine& engine, const check::Test& test, const SourceMap& sources, bool verbose) {
  RanCase ran{policy_test::run_case(engine, test), format_location(test.where, sources), {}, {}};
  if (ran.result.failure) ran.failure_where = format_location(ran.result.failure->where, sources);
  if (verbose) ran.stream = ran.result.decision_lines;
  return ran;
}

/// The blocks of every file whose name `filter` matches (all without a filter).
std::vector<RanFile> run_files(const Args& args, const std::vector<std::string>& files,
                               const std::optional<std::regex>& filter, int& status) {
  std::vector<RanFile> out;
  const bool verbose = args.has("verbose");
  for (const std::string& path : files) {
    RanFile& file = out.emplace_back();
    file.path = path;
    // A file without test blocks (a catalog, a library of teams a policy imports) has nothing to
    // run: it is checked as `gov check` checks it, not required to be a whole policy. Anything
    // else, including a file that does not check, goes the engine's way, which reports it.
    const driver::Result checked =
        driver::load(driver::Source::file(path, root_option(args)), driver::Request::up_to(driver::Stage::check, /*require_cluster=*/false));
    if (checked.ok() && checked.policy->checked.ok() && checked.policy->checked.result.policy.tests.empty()) {
      file.loaded = true;
      continue;
    }
    int load_status = kOk;
    std::optional<gov::Engine> engine = open_engine(args, path, load_status);
    if (!engine) {
      status = std::max(status, load_status);
      file.error = check_failure(checked);
      continue;
    }
    file.loaded = true;
    const std::shared_ptr<const RunnablePolicy> policy = EngineInternals::runnable(*engine);
    const SourceMap& sources = policy->checked.program.sources;
    for (const check::Test& test : policy->checked.result.policy.tests) {
      if (filter && !std::regex_search(test.name, *filter)) continue;
      file.cases.push_back(run_one(*engine, test, sources, verbose));
    }
  }
  return out;
}

struct Totals {
  size_t passed = 0, failed = 0, not_loaded = 0;
};

Totals totals_of(const std::vector<RanFile>& files) {
  Totals t;
  for (const RanFile& file : files) {
    if (!file.loaded) ++t.not_loaded;
    for (const RanCase& c : file.cases) ++(c.result.passed() ? t.passed : t.failed);
  }
  return t;
}

std::string text_report(const std::vector<RanFile>& files, const Totals& totals) {
  std::string out;
  for (const RanFile& file : files) {
    for (const RanCase& c : file.cases) {
      out += fmt::format("{}  {}: {}\n", c.result.passed() ? "ok  " : "FAIL", display_path(file.path),
                         escape_for_terminal(c.result.name));
      if (!c.result.passed()) out += escape_lines_for_terminal(failure_report(c));
      // -v after a failure report, which lists the recent decisions: a heading keeps the whole
      // stream from reading as the instant replayed (a new author's finding).
      if (!c.result.passed() && !c.stream.empty()) out += "    every decision of the test (-v):\n";
      for (const std::string& line : c.stream) out += fmt::format("      {}\n", escape_for_terminal(line));
    }
  }
  out += fmt::format("{} passed, {} failed", totals.passed, totals.failed);
  if (totals.not_loaded > 0) {
    out += fmt::format(", {} {} did not check", totals.not_loaded, totals.not_loaded == 1 ? "file" : "files");
  }
  return out + "\n";
}

std::string json_report(const std::vector<RanFile>& files, const Totals& totals) {
  JsonWriter out(/*indented=*/true);
  out.begin_object();
  out.field("passed", uint64_t{totals.passed});
  out.field("failed", uint64_t{totals.failed});
  out.field("files_not_checked", uint64_t{totals.not_loaded});
  out.key("files");
  out.begin_array();
  for (const RanFile& file : files) {
    out.begin_object();
    out.field("file", file.path);
    out.field("checked", file.loaded);
    if (!file.loaded && !file.error.empty()) out.field("error", file.error);
    out.key("tests");
    out.begin_array();
    for (const RanCase& c : file.cases) {
      out.begin_object();
      out.field("name", c.result.name);
      out.field("where", c.where);
      out.field("passed", c.result.passed());
      if (const auto& failure = c.result.failure) {
        out.key("failure");
        out.begin_object();
        out.field("where", c.failure_where);
        out.field("expected", failure->expected);
        out.field("actual", failure->actual);
        out.key("decision");
        if (failure->decision) {
          out.string(*failure->decision);
        } else {
          out.null();
        }
        out.key("recent");
        out.begin_array();
        for (const std::string& line : failure->recent) out.string(line);
        out.end_array();
        out.end_object();
      }
      out.key("decisions");  // the block's stream: decision-stream objects, as `gov simulate` writes them
      out.begin_array();
      for (const std::string& line : c.result.decisions) out.embedded(line);
      out.end_array();
      out.end_object();
    }
    out.end_array();
    out.end_object();
  }
  out.end_array();
  out.end_object();
  return out.finish();
}

/// JUnit XML as CI systems read it (GitHub, GitLab, Jenkins): one <testsuite> per file, one
/// <testcase> per block; a file that did not check is one <testcase> with an <error>.
std::string junit_report(const std::vector<RanFile>& files, const Totals& totals) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gov test\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
                     totals.passed + totals.failed + totals.not_loaded, totals.failed, totals.not_loaded);
  for (const RanFile& file : files) {
    const std::string name = support::escape_markup(file.path);
    const size_t failures = static_cast<size_t>(
        std::count_if(file.cases.begin(), file.cases.end(), [](const RanCase& c) { return !c.result.passed(); }));
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n", name,
                       file.loaded ? file.cases.size() : 1, failures, file.loaded ? 0 : 1);
    if (!file.loaded) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"(check)\">\n", name);
      out += "      <error message=\"the policy does not check; see gov check\"/>\n    </testcase>\n";
    }
    for (const RanCase& c : file.cases) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", name, support::escape_markup(c.result.name));
      if (c.result.passed()) {
        out += "/>\n";
        continue;
      }
      const policy_test::Failure& failure = *c.result.failure;
      out += fmt::format(">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                         support::escape_markup(fmt::format("expected {}, but {}", failure.expected, failure.actual)),
                         support::escape_markup(failure_report(c)));
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

int run_test_command(const Args& args) {
  if (args.positional.empty()) {
    fmt::print(stderr, "error: `gov test` needs at least one FILE or directory\n");
    return kUsage;
  }
  const std::string format = args.value("format").value_or("text");
  if (format != "text" && format != "json" && format != "junit") {
    fmt::print(stderr, "error: unknown format `{}` (expected text, json or junit)\n", escape_for_terminal(format));
    return kUsage;
  }
  std::optional<std::regex> filter;
  if (std::optional<std::string> pattern = args.value("run")) {
    try {
      filter.emplace(*pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      fmt::print(stderr, "error: `--run {}`: not a regular expression ({})\n", escape_for_terminal(*pattern), error.what());
      return kUsage;
    }
  }
  // A bad --engine or --dialect is a usage error before any file, not a file that did not check.
  if (!api_options_from(args)) return kUsage;
  int status = kOk;
  const std::optional<std::vector<std::string>> files = policy_files(args.positional, status);
  if (!files) return status;
  const std::vector<RanFile> ran = run_files(args, *files, filter, status);
  const Totals totals = totals_of(ran);
  if (format == "json") {
    fmt::print("{}", json_report(ran, totals));
  } else if (format == "junit") {
    fmt::print("{}", junit_report(ran, totals));
  } else {
    fmt::print("{}", text_report(ran, totals));
  }
  if (status != kOk) return status;
  // A filter that matches nothing is a mistake (a typo in a CI job would pass with no test run).
  if (filter && totals.passed + totals.failed == 0 && totals.not_loaded == 0) {
    fmt::print(stderr, "error: no test block matches `--run {}`\n", escape_for_terminal(*args.value("run")));
    return kFailed;
  }
  return totals.failed ? kFailed : kOk;
}

}  // namespace

Command test_command() {
  std::vector<OptionSpec> options = engine_options();
  options.push_back({"verbose", "", "print every block's decision stream (also -v)"});
  options.push_back({"run", "REGEX", "run only the blocks whose name matches (ECMAScript syntax, a substring match)"});
  options.push_back({"format", "FORMAT", "text (default), json or junit (JUnit XML for CI test reports)"});
  return {{"test", "gov test FILE|DIR... [--run REGEX] [-v] [--format text|json|junit] [--engine interp] [--dialect head|kueue-v0.9]",
           "Run the `test` blocks of policy files through the engine.",
           "Each test starts from an empty cluster. `submit`, `finish` and `cancel` happen at the current time\n"
           "(`at` moves it); each `expect` checks the next decision of its task that no earlier `expect` checked,\n"
           "so a test reads like the decision stream; `expect eventually` checks the task's latest decision so far\n"
           "(the ones before it need not be spelled out). A directory stands for every `*.gov` file below it.\n"
           "Prints each failure with the expected and the actual decision and the decisions since the previous\n"
           "`expect`, and a final `N passed, N failed` line (with the files that did not check, if any); exit\n"
           "status 1 when a test fails or a file does not check.",
           options},
          run_test_command};
}

}  // namespace gov::cli
