#include "compiler/check/limits.hpp"

#include <fmt/format.h>

#include <string_view>
#include <type_traits>
#include <variant>

namespace gov::check {
namespace {

struct KindInfo {
  std::string_view plural;
  size_t limit;
  std::string_view help;
};

constexpr std::array<KindInfo, 5> kKindInfo = {{
    {"teams", kMaxTeams, "HyperPod clusters have tens of teams; this bound keeps checking and admission fast"},
    {"rules", kMaxRules, "combine rules whose conditions differ only in a constant, with `in [...]`"},
    {"tests", kMaxTests, "split the tests into several test files that import the policy"},
    {"instance types", kMaxInstanceTypes, "declare only the instance types the cluster uses"},
    {"cohorts", kMaxCohorts, "organisations have tens of departments; merge cohorts that need no limits of their own"},
}};

}  // namespace

void DeclarationCounter::add(const ast::File& file, Diagnostics& diagnostics) {
  for (const ast::Declaration& declaration : file.declarations) {
    std::visit(
        [&](const auto& d) {
          using T = std::decay_t<decltype(d)>;
          if constexpr (std::is_same_v<T, ast::Team>) count(kTeams, d.span, file.source, diagnostics);
          if constexpr (std::is_same_v<T, ast::Rule>) count(kRules, d.span, file.source, diagnostics);
          if constexpr (std::is_same_v<T, ast::Test>) count(kTests, d.span, file.source, diagnostics);
          if constexpr (std::is_same_v<T, ast::Cohort>) count(kCohorts, d.span, file.source, diagnostics);
          if constexpr (std::is_same_v<T, ast::Catalog>) {
            for (const ast::Instance& instance : d.instances) count(kInstanceTypes, instance.span, file.source, diagnostics);
          }
        },
        declaration);
  }
}

void DeclarationCounter::count(Kind kind, Span span, SourceId source, Diagnostics& diagnostics) {
  const KindInfo& info = kKindInfo[kind];
  if (++counts_[kind] != info.limit + 1) return;  // report once, at the first one too many
  exceeded_ = true;
  Diagnostic d = make_diagnostic(Code::too_many, {source, span},
                                 fmt::format("more than {} {} in one policy", info.limit, info.plural),
                                 fmt::format("{} number {}", info.plural, info.limit + 1));
  d.help = std::string(info.help);
  diagnostics.report(std::move(d));
}

}  // namespace gov::check
