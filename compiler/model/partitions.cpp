#include "compiler/model/partitions.hpp"

#include <array>

namespace gov::model {
namespace {

/// The distinct profiles of the rows of ../shared/data/mig-profiles.tsv with `in_api_enum = yes`
/// (A100 40 GB and 80 GB, H100, H200, B200, GB200), in the data's order.
constexpr std::array<std::string_view, 28> kHyperPodProfiles = {
    "mig-1g.5gb",  "mig-1g.10gb", "mig-2g.10gb", "mig-3g.20gb", "mig-4g.20gb",  "mig-7g.40gb",  "mig-1g.20gb",
    "mig-2g.20gb", "mig-3g.40gb", "mig-4g.40gb", "mig-7g.80gb", "mig-1g.18gb",  "mig-1g.35gb",  "mig-2g.35gb",
    "mig-3g.71gb", "mig-4g.71gb", "mig-7g.141gb", "mig-1g.23gb", "mig-1g.45gb", "mig-2g.45gb",  "mig-3g.90gb",
    "mig-4g.90gb", "mig-7g.180gb", "mig-1g.47gb", "mig-2g.47gb", "mig-3g.93gb", "mig-4g.93gb", "mig-7g.186gb",
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<ProfileSize> parse_mig_profile(std::string_view profile) {
  constexpr std::string_view kPrefix = "mig-";
  constexpr std::string_view kSuffix = "gb";
  if (profile.size() < kPrefix.size() + 5 || profile.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = profile.substr(kPrefix.size());
  // `<slices>g.`: one digit 1–7.
  if (rest.size() < 3 || rest[0] < '1' || rest[0] > '7' || rest[1] != 'g' || rest[2] != '.') return std::nullopt;
  ProfileSize size;
  size.slices = rest[0] - '0';
  rest.remove_prefix(3);
  if (rest.size() <= kSuffix.size() || rest.substr(rest.size() - kSuffix.size()) != kSuffix) return std::nullopt;
  const std::string_view digits = rest.substr(0, rest.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 5 || digits[0] == '0') return std::nullopt;
  for (char c : digits) {
    if (!is_digit(c)) return std::nullopt;
    size.memory_gb = size.memory_gb * 10 + (c - '0');
  }
  return size;
}

bool in_hyperpod_partition_enum(std::string_view profile) {
  for (std::string_view p : kHyperPodProfiles) {
    if (p == profile) return true;
  }
  return false;
}

std::string partition_resource_name(std::string_view profile) {
  return "nvidia.com/" + std::string(profile);
}

}  // namespace gov::model
