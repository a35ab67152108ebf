// Kubernetes' DNS-1123 names (apimachinery's validation), which the API server requires of object
// names, namespaces and many other names: lowercase letters, digits and `-`, starting and ending
// with a letter or digit; a subdomain may also hold `.` between such labels.
#pragma once

#include <cstddef>
#include <string_view>

namespace gov::model {

inline constexpr size_t kMaxDnsLabel = 63;
inline constexpr size_t kMaxDnsSubdomain = 253;

/// A DNS-1123 label (a namespace; HyperPod's team names): at most 63 characters.
/// With `subdomain`, a DNS-1123 subdomain (an object's name): labels joined by `.`, at most 253.
constexpr bool is_dns1123(std::string_view text, bool subdomain = false) {
  if (text.empty() || text.size() > (subdomain ? kMaxDnsSubdomain : kMaxDnsLabel)) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (alnum(c)) continue;
    const bool edge = i == 0 || i + 1 == text.size() || (subdomain && (text[i - 1] == '.' || text[i + 1] == '.'));
    if (edge || (c != '-' && !(subdomain && c == '.'))) return false;
  }
  return true;
}

static_assert(is_dns1123("team-a") && !is_dns1123("Team-A") && !is_dns1123("-a") && !is_dns1123("a.b"));
static_assert(is_dns1123("a.b-c", true) && !is_dns1123("a..b", true) && !is_dns1123("a.-b", true) && !is_dns1123("a-.b", true));

}  // namespace gov::model
