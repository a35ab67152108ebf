#include "tools/gov/loader.hpp"

#include <fmt/format.h>

#include "compiler/check/schema.hpp"
#include "compiler/support/terminal_text.hpp"
#include "tools/gov/cli.hpp"

namespace gov::cli {

std::optional<LoadedFile> load_and_parse(SourceMap& sources, const std::string& path) {
  std::string error;
  std::optional<std::string> text = read_file(path, kMaxReadBytes, error);
  if (!text) {
    fmt::print(stderr, "error: cannot read `{}`: {}\n", display_path(path), escape_for_terminal(error));
    return std::nullopt;
  }
  const SourceId id = sources.add(path, std::move(*text));
  return LoadedFile{id, check::parse_file(sources, id)};
}

}  // namespace gov::cli
