#include "compiler/diagnostics/codes.hpp"

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
  for (const CodeInfo& info : kCodes) {
    if (info.id == id_or_name || info.name == id_or_name) return info;
  }
  return std::nullopt;
}

}  // namespace gov
