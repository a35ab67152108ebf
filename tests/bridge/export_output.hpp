// What the export tests read from `gov export hyperpod`'s standard output.
#pragma once

#include <string>

namespace gov::test {

/// The file NAME of an export printed on standard output (after its `==> NAME <==` line), or ""
/// when there is none.
inline std::string exported_file(const std::string& out, const std::string& name) {
  const std::string marker = "==> " + name + " <==\n";
  const size_t at = out.find(marker);
  if (at == std::string::npos) return {};
  const size_t begin = at + marker.size();
  const size_t end = out.find("==> ", begin);
  return out.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace gov::test
