#include "tools/gov/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"

namespace gov::cli {

namespace {

/// Appends every `*.gov` file below `dir` (hidden directories skipped) to `out`; false with
/// `error` set when the walk fails.
bool gov_files_below(const std::filesystem::path& dir, std::vector<std::string>& out, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  std::vector<std::string> found;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    const bool directory = it->is_directory(ec);
    if (directory && name.starts_with(".")) {
      it.disable_recursion_pending();
      continue;
    }
    // Normal (`./teams/ml.gov` is `teams/ml.gov`): the name an import of it displays, so that
    // one file has one spelling in the output (annotations and SARIF key on it).
    if (!directory && path.extension() == ".gov" && it->is_regular_file(ec)) found.push_back(path.lexically_normal().string());
  }
  if (ec) {
    error = ec.message();
    return false;
  }
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> policy_files(const std::vector<std::string>& arguments, int& status) {
  std::vector<std::string> files;
  for (const std::string& argument : arguments) {
    std::error_code ec;
    if (argument == "-" || !std::filesystem::is_directory(argument, ec)) {
      // A file: reading it reports what is wrong with it. A leading `./` is dropped, so that it
      // is spelled as an import of it and a directory walk spell it (annotations key on the path).
      // (`./-` stays: it is how a file named `-` is named, `-` being standard input.)
      std::string_view name = argument;
      while (name.size() > 2 && name.starts_with("./") && name.substr(2) != "-") name.remove_prefix(2);
      files.emplace_back(name);
      continue;
    }
    const size_t before = files.size();
    std::string error;
    if (!gov_files_below(argument, files, error)) {
      fmt::print(stderr, "error: cannot list `{}`: {}\n", display_path(argument), escape_for_terminal(error));
      status = kUsage;
      return std::nullopt;
    }
    if (files.size() == before) {
      fmt::print(stderr, "error: `{}` holds no policy file (`*.gov`)\n", display_path(argument));
      status = kUsage;
      return std::nullopt;
    }
  }
  return files;
}

bool Args::has(std::string_view name) const {
  for (const auto& [key, value] : options) {
    if (key == name) return true;
  }
  return false;
}

std::optional<std::string> Args::value(std::string_view name) const {
  std::optional<std::string> found;
  for (const auto& [key, value] : options) {
    if (key == name) found = value;
  }
  return found;
}

std::optional<Args> parse_args(const CommandSpec& spec, const std::vector<std::string>& argv) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--") {
      args.positional.insert(args.positional.end(), argv.begin() + static_cast<long>(i) + 1, argv.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      args.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const OptionSpec* option = nullptr;
    for (const OptionSpec& o : spec.options) {
      if (o.name == name || (name.size() == 1 && !o.name.empty() && o.name[0] == name[0] && arg[1] != '-')) option = &o;
    }
    if (!option) {
      fmt::print(stderr, "error: unknown option `{}` for `gov {}`\nrun `gov {} --help` for the options\n", escape_for_terminal(arg),
                 spec.name, spec.name);
      return std::nullopt;
    }
    if (!option->value_name.empty() && !value) {
      if (i + 1 >= argv.size()) {
        fmt::print(stderr, "error: option `--{}` needs a value ({})\n", option->name, option->value_name);
        return std::nullopt;
      }
      value = argv[++i];
    }
    if (option->value_name.empty() && value) {
      fmt::print(stderr, "error: option `--{}` takes no value\n", option->name);
      return std::nullopt;
    }
    args.options.emplace_back(option->name, value.value_or(""));
  }
  return args;
}

std::string help_text(const CommandSpec& spec) {
  std::string out = fmt::format("{}\n\nUsage: {}\n", spec.summary, spec.usage);
  if (!spec.details.empty()) out += "\n" + spec.details + "\n";
  out += "\nOptions:\n";
  std::vector<OptionSpec> options = spec.options;
  options.push_back({"help", "", "print this help"});
  for (const OptionSpec& o : options) {
    const std::string left = o.value_name.empty() ? "--" + o.name : fmt::format("--{} {}", o.name, o.value_name);
    out += fmt::format("  {:<24} {}\n", left, o.help);
  }
  return out;
}

std::optional<std::string> read_file(const std::string& path, size_t limit, std::string& error) {
  return read_text_file(path, limit, error);
}

void print_error(const driver::Error& error) {
  if (error.kind == driver::ErrorKind::policy && error.message.find('\n') != std::string::npos) {
    fmt::print(stderr, "{}", error.message);  // rendered diagnostics
    return;
  }
  fmt::print(stderr, "error: {}\n", escape_for_terminal(error.message));
}

std::unique_ptr<driver::Policy> load_policy(const driver::Source& source, const driver::Request& request, int& status) {
  driver::Result loaded = driver::load(source, request);
  if (!loaded.ok()) {
    print_error(*loaded.error);
    status = loaded.error->kind == driver::ErrorKind::io ? kUsage : kFailed;
    return nullptr;
  }
  if (!loaded.policy->warning.empty()) fmt::print(stderr, "warning: {}\n", escape_for_terminal(loaded.policy->warning));
  return std::move(loaded.policy);
}

std::string root_option(const Args& args) { return args.value("root").value_or(""); }

OptionSpec root_option_spec() {
  return {"root", "DIR",
          "the directory imports must stay under (default: the nearest directory with a gov.toml, else the "
          "repository top, else the file's directory)"};
}

std::optional<driver::Source> source_argument(const std::string& argument, int& status, const std::string& root) {
  if (argument != "-") return driver::Source::file(argument, root);
  std::string error;
  // A pipe or a terminal as well as a file: read to its end.
  std::optional<std::string> text = read_to_end(STDIN_FILENO, driver::kMaxEntryReadBytes, /*expected=*/0, error);
  if (!text) {
    fmt::print(stderr, "error: cannot read standard input: {}\n", escape_for_terminal(error));
    status = kUsage;
    return std::nullopt;
  }
  return driver::Source::text("<stdin>", std::move(*text));
}

}  // namespace gov::cli
