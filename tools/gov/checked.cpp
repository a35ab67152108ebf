#include "tools/gov/checked.hpp"
#include "compiler/support/terminal_text.hpp"

#include <fmt/format.h>

namespace gov::cli {

std::optional<CheckedPolicy> load_checked(const std::string& path, bool require_cluster,
                                          const check::LoadOptions& options) {
  CheckedPolicy checked = embed::check_file(path, require_cluster, options);
  if (checked.program.read_failed) {
    fmt::print(stderr, "error: {}\n", escape_for_terminal(checked.program.read_error));
    return std::nullopt;
  }
  return checked;
}

}  // namespace gov::cli
