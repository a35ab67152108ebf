// The project's specification lives in docs/ (issue 16, point 10): every citation of
// docs/semantics.md or docs/kueue-reference.md names a section that exists, no citation points
// to the specification outside the repository, and docs/interfaces.md shows the walkthrough's
// decision stream as `gov simulate` prints it.
#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/test_support.hpp"

namespace {

namespace fs = std::filesystem;

// The folders and top-level files whose text may cite the specification (build trees and .git
// are not among them).
const std::vector<std::string> kRoots = {"compiler", "grammar", "runtime", "tools", "tests",
                                         "docs", "policies", "cmake", ".ci", "README.md",
                                         "CMakeLists.txt"};

struct TextFile {
  std::string relative;
  std::string text;
};

// Every regular text file under the roots; files with a NUL byte (fuzz seeds) are skipped.
std::vector<TextFile> repository_text() {
  std::vector<TextFile> out;
  const fs::path base = gov::test::repo_path("");
  const auto add = [&](const fs::path& path) {
    std::string text = gov::test::read_text(path.string());
    if (text.find('\0') != std::string::npos) return;
    out.push_back({fs::relative(path, base).generic_string(), std::move(text)});
  };
  for (const std::string& root : kRoots) {
    const fs::path path = base / root;
    if (fs::is_regular_file(path)) add(path);
    if (!fs::is_directory(path)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(path)) {
      if (entry.is_regular_file()) add(entry.path());
    }
  }
  return out;
}

// The section numbers of a document: "## 3." → "3", "### 4.4 …" → "4.4".
std::set<std::string> sections_of(const std::string& doc) {
  std::set<std::string> out;
  size_t at = 0;
  while (at < doc.size()) {
    size_t end = doc.find('\n', at);
    if (end == std::string::npos) end = doc.size();
    std::string_view line(doc.data() + at, end - at);
    at = end + 1;
    if (line.rfind("## ", 0) != 0 && line.rfind("### ", 0) != 0) continue;
    line.remove_prefix(line.find(' ') + 1);
    size_t n = 0;
    while (n < line.size() && (std::isdigit(static_cast<unsigned char>(line[n])) || line[n] == '.'))
      ++n;
    std::string number(line.substr(0, n));
    while (!number.empty() && number.back() == '.') number.pop_back();
    if (!number.empty()) out.insert(number);
  }
  return out;
}

// The section numbers cited right after position `at`: "§2–§6", "§3 and §7", "§4 step 2 / §5.5",
// "§4, §5.6, §10".
std::vector<std::string> cited_sections(const std::string& text, size_t at) {
  static const std::string kSection = "§";
  std::vector<std::string> out;
  const auto starts = [&](std::string_view s) { return text.compare(at, s.size(), s) == 0; };
  const auto digits = [&] {
    size_t n = at;
    while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) || text[n] == '.'))
      ++n;
    std::string number = text.substr(at, n - at);
    at = n;
    while (!number.empty() && number.back() == '.') number.pop_back();
    return number;
  };
  while (at < text.size()) {
    if (starts(" ")) {
      ++at;
    } else if (starts(kSection)) {
      at += kSection.size();
      std::string number = digits();
      if (number.empty()) break;
      out.push_back(number);
    } else if (starts("–") || starts(",") || starts("/")) {
      at += starts("–") ? std::string("–").size() : 1;
    } else if (starts("and ")) {
      at += 4;
    } else if (starts("step ")) {
      at += 5;
      if (digits().empty()) break;
    } else {
      break;
    }
  }
  return out;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The line of `text` around position `at`.
std::string_view line_at(const std::string& text, size_t at) {
  const size_t begin = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  const size_t end = text.find('\n', at) == std::string::npos ? text.size() : text.find('\n', at);
  return std::string_view(text).substr(begin, end - begin);
}

}  // namespace

TEST_CASE("every citation of docs/semantics.md and docs/kueue-reference.md names a section that exists",
          "[docs]") {
  const std::vector<TextFile> files = repository_text();
  REQUIRE(files.size() > 100);
  size_t citations = 0;
  for (const std::string doc : {"docs/semantics.md", "docs/kueue-reference.md"}) {
    const std::set<std::string> sections = sections_of(gov::test::read_text(gov::test::repo_path(doc)));
    REQUIRE_FALSE(sections.empty());
    for (const TextFile& file : files) {
      for (size_t at = file.text.find(doc); at != std::string::npos;
           at = file.text.find(doc, at + doc.size())) {
        for (const std::string& section : cited_sections(file.text, at + doc.size())) {
          ++citations;
          INFO(file.relative << ": " << line_at(file.text, at));
          CHECK(sections.count(section) == 1);
        }
      }
    }
  }
  // The tree cites the two documents by section well over a hundred times.
  CHECK(citations > 100);
}

TEST_CASE("no citation points to the specification outside the repository", "[docs]") {
  // Spelled in pieces so that this file does not cite them itself.
  const std::vector<std::string> stale = {std::string("SEMAN") + "TICS", std::string("INTER") + "FACES",
                                          std::string("PERFOR") + "MANCE"};
  const std::string kueue = std::string("kueue-") + "reference";
  const std::string origin = std::string("../shared/") + "spec/";
  for (const TextFile& file : repository_text()) {
    const auto allowed = [&](size_t at) {
      // A document in docs/ may say where the project started from.
      return file.relative.rfind("docs/", 0) == 0 &&
             line_at(file.text, at).find(origin) != std::string_view::npos;
    };
    for (const std::string& word : stale) {
      for (size_t at = file.text.find(word); at != std::string::npos; at = file.text.find(word, at + 1)) {
        const bool whole = (at == 0 || !word_char(file.text[at - 1])) &&
                           (at + word.size() == file.text.size() || !word_char(file.text[at + word.size()]));
        if (!whole || allowed(at)) continue;
        INFO(file.relative << ": " << line_at(file.text, at));
        CHECK(false);
      }
    }
    for (size_t at = file.text.find(kueue); at != std::string::npos; at = file.text.find(kueue, at + 1)) {
      if (at >= 5 && file.text.compare(at - 5, 5, "docs/") == 0) continue;
      if (allowed(at)) continue;
      INFO(file.relative << ": " << line_at(file.text, at));
      CHECK(false);
    }
    for (size_t at = file.text.find(origin); at != std::string::npos; at = file.text.find(origin, at + 1)) {
      INFO(file.relative << ": " << line_at(file.text, at));
      CHECK(file.relative.rfind("docs/", 0) == 0);
    }
  }
}

TEST_CASE("docs/interfaces.md shows the walkthrough decision stream byte for byte", "[docs]") {
  const std::string doc = gov::test::read_text(gov::test::repo_path("docs/interfaces.md"));
  const std::string stream = gov::test::read_text(gov::test::repo_path("tests/walkthrough/expected.jsonl"));
  REQUIRE(stream.size() > 100);
  CHECK(doc.find("```json\n" + stream + "```") != std::string::npos);
}

// A planner helper checked the text example by hand and found two decisions missing, on which
// the summary under it depends. Every line of the example is the real output's, in order (a
// message cut to `...` matches the real message's beginning), and none is left out.
TEST_CASE("docs/trace-format.md's text example is the walkthrough's text output", "[docs]") {
  const std::string doc = gov::test::read_text(gov::test::repo_path("docs/trace-format.md"));
  const size_t heading = doc.find("## Text format");
  REQUIRE(heading != std::string::npos);
  const size_t begin = doc.find("```\n", heading) + 4;
  const std::string example = doc.substr(begin, doc.find("```", begin) - begin);
  const gov::test::CommandResult real = gov::test::run_gov(
      "simulate policies/examples/workshop-g5.gov --trace policies/examples/workshop-g5.trace.json --format text");
  REQUIRE(real.exit_code == 0);
  std::vector<std::string> expected, actual;
  std::istringstream in_example(example), in_real(real.out.substr(0, real.out.find("\n\n")));
  for (std::string line; std::getline(in_example, line);) expected.push_back(line);
  for (std::string line; std::getline(in_real, line);) actual.push_back(line);
  REQUIRE(expected.size() == actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(expected[i] << "\n" << actual[i]);
    const bool cut = expected[i].ends_with("...");
    CHECK((cut ? actual[i].rfind(expected[i].substr(0, expected[i].size() - 3), 0) == 0 : actual[i] == expected[i]));
  }
}
