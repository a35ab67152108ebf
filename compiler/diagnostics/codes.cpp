#include "compiler/diagnostics/codes.hpp"

#include <algorithm>
#include <array>

namespace gov {
namespace {

constexpr std::array kCodes = {
#define GOV_X(id, code, name, severity, summary) CodeInfo{Code::id, code, name, Severity::severity, summary},
    GOV_DIAGNOSTIC_CODES(GOV_X)
#undef GOV_X
};

}  // namespace

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

std::span<const CodeInfo> all_codes() { return kCodes; }

const CodeInfo& code_info(Code code) { return kCodes[static_cast<size_t>(code)]; }

std::optional<CodeInfo> find_code(std::string_view id_or_name) {
  // A code in either case (`e0020` as `E0020`: a what-if analyst's finding, session 43); names
  // are lower case.
  const auto same_id = [&](std::string_view id) {
    return id.size() == id_or_name.size() &&
           std::equal(id.begin(), id.end(), id_or_name.begin(), [](char a, char b) {
             return a == (b >= 'a' && b <= 'z' ? static_cast<char>(b - 'a' + 'A') : b);
           });
  };
  for (const CodeInfo& info : kCodes) {
    if (same_id(info.id) || info.name == id_or_name) return info;
  }
  return std::nullopt;
}

}  // namespace gov
