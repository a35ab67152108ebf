// The code table is unique and mirrored in docs/diagnostics.md.
#include <catch2/catch.hpp>

#include <cctype>
#include <set>

#include "compiler/diagnostics/codes.hpp"
#include "tests/support/test_support.hpp"

TEST_CASE("diagnostic codes and names are unique", "[codes]") {
  std::set<std::string_view> ids, names;
  for (const auto& info : gov::all_codes()) {
    CHECK(ids.insert(info.id).second);
    CHECK(names.insert(info.name).second);
    CHECK_FALSE(info.summary.empty());
  }
}

TEST_CASE("docs/diagnostics.md lists every code with its name and a section the helpUri finds", "[codes]") {
  const std::string doc = gov::test::read_text(gov::test::repo_path("docs/diagnostics.md"));
  for (const auto& info : gov::all_codes()) {
    INFO(info.id);
    std::string anchor(info.id);
    for (char& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(doc.find("| [" + std::string(info.id) + "](#" + anchor + ") | `" + std::string(info.name) + "` |") !=
          std::string::npos);
    // GitHub's anchor for `### E0203` is `e0203`: what SARIF's helpUri and `gov explain` name.
    CHECK(doc.find("\n### " + std::string(info.id) + "\n") != std::string::npos);
  }
}
