// support::unified_diff (`gov fmt --diff`): the `diff -u` format, exactly on small cases, and
// correct (applying it turns the old text into the new one) on random texts.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/support/text_diff.hpp"

using gov::support::unified_diff;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const size_t next = end == std::string::npos ? text.size() : end + 1;
    out.push_back(text.substr(at, next - at));
    at = next;
  }
  return out;
}

/// Applies a unified diff to `before`, checking every context and removed line on the way.
std::string apply(const std::string& before, const std::string& diff) {
  const std::vector<std::string> old_lines = lines_of(before);
  std::vector<std::string> patch = lines_of(diff);
  std::string out;
  size_t next_old = 0;  // 0-based
  for (size_t p = 2; p < patch.size();) {
    size_t a_first = 0, a_count = 0, b_first = 0, b_count = 0;
    REQUIRE(std::sscanf(patch[p].c_str(), "@@ -%zu,%zu +%zu,%zu @@", &a_first, &a_count, &b_first, &b_count) == 4);
    const size_t start = a_count == 0 ? a_first : a_first - 1;
    REQUIRE(start >= next_old);
    for (; next_old < start; ++next_old) out += old_lines[next_old];
    for (++p; p < patch.size() && patch[p].rfind("@@", 0) != 0; ++p) {
      std::string line = patch[p].substr(1);
      if (p + 1 < patch.size() && patch[p + 1].rfind("\\ No newline", 0) == 0) {
        line.pop_back();
        ++p;
        // `p` now points at the marker; the loop's ++p skips it.
      }
      const char op = patch[p - (patch[p].rfind("\\ No newline", 0) == 0 ? 1 : 0)][0];
      if (op == ' ' || op == '-') {
        REQUIRE(next_old < old_lines.size());
        CHECK(old_lines[next_old] == line);
        ++next_old;
      }
      if (op == ' ' || op == '+') out += line;
    }
  }
  for (; next_old < old_lines.size(); ++next_old) out += old_lines[next_old];
  return out;
}

}  // namespace

TEST_CASE("unified_diff writes diff -u hunks", "[unit][diff]") {
  CHECK(unified_diff("a", "b", "same\n", "same\n").empty());
  CHECK(unified_diff("a", "b", "one\ntwo\nthree\n", "one\n2\nthree\n") ==
        "--- a\n+++ b\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n");
  // Changes far apart make two hunks with three lines of context each.
  std::string before, after;
  for (int i = 1; i <= 20; ++i) {
    before += std::to_string(i) + "\n";
    after += (i == 2 ? std::string("two") : i == 18 ? std::string("eighteen") : std::to_string(i)) + "\n";
  }
  CHECK(unified_diff("a", "b", before, after) ==
        "--- a\n+++ b\n"
        "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
        "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n");
  // Insertion into an empty text, and a last line without its line end.
  CHECK(unified_diff("a", "b", "", "x\n") == "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n");
  CHECK(unified_diff("a", "b", "x", "x\n") == "--- a\n+++ b\n@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+x\n");
}

TEST_CASE("unified_diff: applying the diff gives the new text", "[unit][diff][property]") {
  std::mt19937 rng(20261126);
  const std::vector<std::string> vocabulary = {"a\n", "b\n", "c\n", "team x {\n", "}\n", "\n", "  quota\n"};
  for (int round = 0; round < 500; ++round) {
    auto random_text = [&] {
      std::string text;
      const int n = static_cast<int>(rng() % 25);
      for (int i = 0; i < n; ++i) text += vocabulary[rng() % vocabulary.size()];
      if (rng() % 5 == 0 && !text.empty()) text.pop_back();  // sometimes no final line end
      return text;
    };
    const std::string before = random_text(), after = random_text();
    const std::string diff = unified_diff("a", "b", before, after);
    INFO("before:\n" << before << "\nafter:\n" << after << "\ndiff:\n" << diff);
    if (before == after) {
      CHECK(diff.empty());
      continue;
    }
    CHECK(apply(before, diff) == after);
  }
}
