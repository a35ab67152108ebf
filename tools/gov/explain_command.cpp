// `gov explain`: what a diagnostic code means.
#include <cctype>

#include <fmt/format.h>

#include "compiler/diagnostics/codes.hpp"
#include "compiler/support/terminal_text.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

int run_explain(const Args& args) {
  if (args.positional.empty()) {
    for (const CodeInfo& info : all_codes()) fmt::print("{}  {:<28} {}\n", info.id, info.name, info.summary);
    return kOk;
  }
  int status = kOk;
  for (const std::string& wanted : args.positional) {
    std::optional<CodeInfo> info = find_code(wanted);
    if (!info) {
      fmt::print(stderr, "error: no diagnostic code `{}`; run `gov explain` for the list\n", escape_for_terminal(wanted));
      status = kUsage;
      continue;
    }
    // The section's anchor is the code in lower case, as GitHub writes heading anchors.
    std::string anchor(info->id);
    for (char& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    fmt::print("{} ({}, {}): {}\nSee docs/diagnostics.md#{} for an example.\n", info->id, info->name,
               severity_name(info->severity), info->summary, anchor);
  }
  return status;
}

}  // namespace

Command explain_command() {
  return {{"explain", "gov explain [CODE|NAME]...", "Explain diagnostic codes; without arguments, list them all.",
           "", {}},
          run_explain};
}

}  // namespace gov::cli
