// The JSON files of `gov import hyperpod` and `gov export hyperpod --current`.
#include "tools/gov/json_inputs.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "compiler/support/terminal_text.hpp"
#include "tools/gov/cli.hpp"

namespace gov::cli {

std::optional<std::vector<bridge::ImportInput>> read_json_inputs(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (std::filesystem::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".json" && it->is_regular_file(ec)) found.push_back(it->path().string());
    }
    if (ec) {
      fmt::print(stderr, "error: cannot read `{}`: {}\n", escape_for_terminal(path), ec.message());
      return std::nullopt;
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
    if (files.size() > kMaxJsonInputs) break;
  }
  if (files.size() > kMaxJsonInputs) {
    fmt::print(stderr, "error: more than {} JSON files to read\n", kMaxJsonInputs);
    return std::nullopt;
  }
  std::vector<bridge::ImportInput> inputs;
  for (const std::string& path : files) {
    std::string error;
    std::optional<std::string> text = read_file(path, bridge::kMaxImportBytes, error);
    if (!text) {
      fmt::print(stderr, "error: cannot read `{}`: {}\n", escape_for_terminal(path), escape_for_terminal(error));
      return std::nullopt;
    }
    inputs.push_back({display_path(path), std::move(*text)});
  }
  return inputs;
}

}  // namespace gov::cli
