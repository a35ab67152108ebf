// `gov import`: an existing SageMaker HyperPod setup as a formatted `.gov` policy that checks.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "compiler/bridge/bridge.hpp"
#include "compiler/diagnostics/diagnostic.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/format/format.hpp"
#include "compiler/kube/yaml.hpp"
#include "compiler/support/terminal_text.hpp"
#include "tools/gov/commands.hpp"
#include "tools/gov/json_inputs.hpp"

namespace gov::cli {
namespace {

/// `diagnostics`, each about a part of the imported policy (source `imported`) written from an
/// input object with a note naming that object: the policy is one the user never saw.
Diagnostics with_origins(const Diagnostics& diagnostics, SourceId imported, const std::vector<bridge::ImportOrigin>& origins) {
  Diagnostics out;
  for (Diagnostic d : diagnostics.items()) {
    for (const bridge::ImportOrigin& origin : origins) {
      if (d.primary.source == imported && origin.begin <= d.primary.span.begin && d.primary.span.begin < origin.end) {
        d.notes.push_back({std::nullopt, fmt::format("written from {}", origin.object)});
      }
    }
    out.report(std::move(d));
  }
  return out;
}

/// The catalog `--catalog` names: the file to read, and what the policy's import says.
struct CatalogChoice {
  std::string file;
  std::string import_target;
};

/// A shipped catalog's name (`aws-ml`: what `import "aws-ml"` finds from any directory, so the
/// policy's import is that name), or a file path (imported as given). Nullopt after printing a
/// usage error.
std::optional<CatalogChoice> choose_catalog(const std::string& given) {
  const bool path = given.find('/') != std::string::npos || given.ends_with(".gov");
  if (path) return CatalogChoice{given, given};
  std::string looked;
  for (const std::string& directory : driver::catalog_directories()) {
    const std::filesystem::path file = std::filesystem::path(directory) / (given + ".gov");
    std::error_code ignored;
    if (std::filesystem::is_regular_file(file, ignored)) return CatalogChoice{file.string(), given};
    looked += (looked.empty() ? "" : ", ") + directory;
  }
  fmt::print(stderr, "error: `--catalog {}`: no shipped catalog of that name (looked in {}); give a catalog file's path\n",
             escape_for_terminal(given), escape_for_terminal(looked));
  return std::nullopt;
}

/// `ml.g5.8xlarge=2,ml.p5.48xlarge=1`; nullopt after printing a usage error.
std::optional<std::vector<std::pair<std::string, int64_t>>> capacity_argument(const std::string& text) {
  std::vector<std::pair<std::string, int64_t>> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string entry = text.substr(at, comma - at);
    const size_t eq = entry.find('=');
    int64_t count = -1;
    if (eq != std::string::npos && eq > 0 && eq + 1 < entry.size() && entry.size() - eq - 1 <= 9) {
      count = 0;
      for (char c : entry.substr(eq + 1)) count = (c >= '0' && c <= '9' && count >= 0) ? count * 10 + (c - '0') : -1;
    }
    if (count < 0) {
      fmt::print(stderr, "error: `--capacity` entry `{}` is not TYPE=N\n", escape_for_terminal(entry));
      return std::nullopt;
    }
    out.emplace_back(entry.substr(0, eq), count);
    at = comma + 1;
  }
  return out;
}

/// --capacity's types against the catalog, each once; false after printing a usage error that
/// names the entry (checked in the generated policy, the mistake was reported inside it).
bool capacity_in_catalog(const std::vector<std::pair<std::string, int64_t>>& capacity, const check::Catalog& catalog) {
  std::vector<std::string> names;
  for (const check::InstanceType& type : catalog.types) names.push_back(type.name);
  std::vector<std::string> seen;
  for (const auto& [type, count] : capacity) {
    if (std::find(names.begin(), names.end(), type) == names.end()) {
      const std::optional<std::string> near = closest_match(type, names);
      fmt::print(stderr, "error: `--capacity` entry `{}={}`: `{}` is not an instance type of catalog `{}`{}\n",
                 escape_for_terminal(type), count, escape_for_terminal(type), escape_for_terminal(catalog.name),
                 near ? fmt::format(" (did you mean `{}`?)", *near) : "");
      return false;
    }
    if (std::find(seen.begin(), seen.end(), type) != seen.end()) {
      fmt::print(stderr, "error: `--capacity` gives `{}` twice\n", escape_for_terminal(type));
      return false;
    }
    seen.push_back(type);
  }
  return true;
}

int run_import(const Args& args) {
  const bool kueue = !args.positional.empty() && args.positional[0] == "kueue";
  if (args.positional.size() < 2 || (args.positional[0] != "hyperpod" && !kueue)) {
    fmt::print(stderr, "error: `gov import` takes `hyperpod` or `kueue` and one or more FILEs (describe-* outputs, Kueue YAML)\n");
    return kUsage;
  }
  bridge::ImportOptions options;
  const std::optional<CatalogChoice> chosen = choose_catalog(args.value("catalog").value_or("aws-ml"));
  if (!chosen) return kUsage;
  options.catalog_import = chosen->import_target;
  if (const std::optional<std::string> idle = args.value("idle-compute")) {
    if (!kueue || (*idle != "fcfs" && *idle != "fair-share")) {
      fmt::print(stderr, "error: --idle-compute takes `fcfs` or `fair-share`, for `gov import kueue` (Kueue's "
                         "fairSharing.enable, which no object shows)\n");
      return kUsage;
    }
    options.idle_compute = *idle;
  }
  if (const std::optional<std::string> capacity = args.value("capacity")) {
    std::optional<std::vector<std::pair<std::string, int64_t>>> parsed = capacity_argument(*capacity);
    if (!parsed) return kUsage;
    options.capacity = std::move(*parsed);
  }

  // The catalog the instance types come from, checked on its own.
  int status = kOk;
  std::unique_ptr<driver::Policy> catalog =
      load_policy(driver::Source::file(chosen->file), driver::Request::up_to(driver::Stage::check, /*require_cluster=*/false), status);
  if (!catalog) return status;
  if (!catalog->checked.ok() || catalog->checked.result.policy.catalogs.size() != 1) {
    fmt::print(stderr, "error: `{}` must be one catalog that checks\n", escape_for_terminal(options.catalog_import));
    return kUsage;
  }
  std::string error;
  std::string catalog_text;
  if (std::optional<std::string> text = read_file(chosen->file, bridge::kMaxImportBytes * 16, error)) catalog_text = std::move(*text);

  std::vector<bridge::ImportInput> inputs;
  const std::vector<std::string> paths(args.positional.begin() + 1, args.positional.end());
  if (kueue) {
    for (const std::string& path : paths) {
      std::optional<std::string> text = read_file(path, kube::YamlLimits{}.max_bytes, error);
      if (!text) {
        fmt::print(stderr, "error: cannot read `{}`: {}\n", escape_for_terminal(path), escape_for_terminal(error));
        return kUsage;
      }
      inputs.push_back({display_path(path), std::move(*text)});
    }
  } else {  // HyperPod's JSON outputs: files, or the `.json` files of directories
    std::optional<std::vector<bridge::ImportInput>> json = read_json_inputs(paths);
    if (!json) return kUsage;
    inputs = std::move(*json);
  }
  const check::Catalog& types = catalog->checked.result.policy.catalogs[0];
  if (!capacity_in_catalog(options.capacity, types)) return kUsage;
  std::vector<bridge::ImportOrigin> origins;
  support::Expected<std::string> imported =
      kueue ? bridge::import_kueue(inputs, types, options, &origins) : bridge::import_hyperpod(inputs, types, options, &origins);
  if (!imported) {
    fmt::print(stderr, "error: {}\n", escape_for_terminal(imported.error().message));
    return kFailed;
  }

  // Checked and formatted in memory, the catalog beside it, then printed with the import the
  // user named.
  const std::string import_line = fmt::format("import \"{}\"\n", options.catalog_import);
  std::string text = imported.value();
  const size_t line = text.find(import_line);
  const std::string_view memory_import = "import \"catalog.gov\"\n";
  text.replace(line, import_line.size(), memory_import);
  for (bridge::ImportOrigin& origin : origins) {  // the blocks come after the import
    origin.begin = static_cast<uint32_t>(origin.begin + memory_import.size() - import_line.size());
    origin.end = static_cast<uint32_t>(origin.end + memory_import.size() - import_line.size());
  }
  check::MemorySources files("gov import");
  files.add("imported.gov", text);
  files.add("catalog.gov", catalog_text);
  std::unique_ptr<driver::Policy> policy =
      load_policy(driver::Source::memory(std::move(files), "imported.gov", "<imported>"), driver::Request::up_to(driver::Stage::check), status);
  if (!policy) return status;
  if (!policy->checked.ok()) {
    DiagnosticPrinter printer;
    printer.add(with_origins(policy->checked.diagnostics(), policy->checked.program.files.front().source, origins),
                policy->checked.program.sources);
    fmt::print(stderr, "error: the imported policy does not check:\n{}", printer.text());
    return kFailed;
  }
  const check::ProgramFile& entry = policy->checked.program.files.front();
  std::string formatted = format::format(entry.ast, policy->checked.program.sources.get(entry.source));
  const size_t at = formatted.find("import \"catalog.gov\"\n");
  if (at != std::string::npos) formatted.replace(at, std::string_view("import \"catalog.gov\"\n").size(), import_line);
  fmt::print("{}", formatted);
  return kOk;
}

}  // namespace

Command import_command() {
  return {{"import", "gov import hyperpod FILE|DIR... | gov import kueue FILE... [--catalog PATH] [--capacity TYPE=N,...]",
           "Read an existing SageMaker HyperPod or Kueue setup and print it as a formatted `.gov` policy.",
           "FILEs are `aws sagemaker describe-cluster-scheduler-config` and `describe-compute-quota` outputs (one JSON\n"
           "object each, at most one scheduler config), or `list-compute-quotas` outputs (a quota listed and described\n"
           "is read once; `list-cluster-scheduler-configs` needs the config's describe too); a DIR stands for its\n"
           "`.json` files in name order. The policy imports the catalog `--catalog` names: a shipped catalog's\n"
           "name (default aws-ml, which `import \"aws-ml\"` finds from any directory) or a catalog file's path\n"
           "(written as given: run from the directory the policy will live in). HyperPod's API has no capacity,\n"
           "so give it with `--capacity ml.g5.8xlarge=4,...` or fill in the comment. The output checks. What gov\n"
           "cannot represent (an unknown member, a partition, an amount that is not a whole number of MiB or\n"
           "millicores) is an error naming the file, the object and the member.\n"
           "`gov import kueue` reads Kueue's objects instead (`kubectl get clusterqueues,cohorts,resourceflavors,\n"
           "localqueues,workloadpriorityclasses -A -o yaml`, v1beta1 or v1beta2, Lists included); its errors name the\n"
           "file, line and column, the object and the field. See docs/deploy.md and docs/kubernetes.md.",
           {{"catalog", "NAME|PATH", "a shipped catalog's name or a catalog file (default aws-ml)"},
            {"capacity", "TYPE=N,...", "instances of each type in the cluster"},
            {"idle-compute", "fcfs|fair-share", "gov import kueue: whether the Kueue manager enables fairSharing "
                                                "(default: a Cohort's gov annotation, else fair-share, written out)"}}},
          run_import};
}

}  // namespace gov::cli
