#include "tests/support/dynamic_cases.hpp"

#include <catch2/catch.hpp>

#include <exception>
#include <set>
#include <utility>
#include <vector>

namespace gov::test {
namespace {

std::vector<Registrar>& registrars() {
  static std::vector<Registrar> all;  // function-local: safe to use from static initialisers
  return all;
}

/// Runs a std::function as a Catch2 test body.
class FunctionInvoker : public Catch::ITestInvoker {
 public:
  explicit FunctionInvoker(std::function<void()> body) : body_(std::move(body)) {}
  void invoke() const override { body_(); }

 private:
  std::function<void()> body_;
};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return text;
}

}  // namespace

bool add_registrar(Registrar registrar) {
  registrars().push_back(registrar);
  return true;
}

void run_registrars() {
  // A registrar that throws (a missing directory, an unreadable file) must not take the whole
  // executable down, nor hide its cases silently: it leaves a case that fails with the reason.
  for (size_t i = 0; i < registrars().size(); ++i) {
    try {
      registrars()[i]();
    } catch (const std::exception& e) {
      const std::string why = e.what();
      register_case("test registration " + std::to_string(i + 1) + " failed", "[registration]",
                    [why] { FAIL("registering test cases failed: " << why); }, __FILE__, __LINE__);
    }
  }
}

std::string safe_case_name(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case ',': break;
      case '[': out += '('; break;
      case ']': out += ')'; break;
      case ';': out += ':'; break;
      case '\\': out += '/'; break;
      case '"': out += '\''; break;
      case '*': out += '_'; break;
      default: out += c >= 0x20 && c < 0x7f ? c : '_'; break;
    }
  }
  return out;
}

void register_case(std::string_view name, const std::string& tags, std::function<void()> body, const char* file,
                   int line) {
  // Catch2 stops with "already defined" on an exact duplicate, and its test specs ignore case.
  static std::set<std::string> taken;
  const std::string base = safe_case_name(name);
  std::string unique = base;
  for (int n = 2; !taken.insert(lower(unique)).second; ++n) unique = base + " #" + std::to_string(n);
  Catch::getMutableRegistryHub().registerTest(
      Catch::makeTestCase(new FunctionInvoker(std::move(body)), /*className=*/"",
                          Catch::NameAndTags(unique, tags), Catch::SourceLineInfo(file, static_cast<size_t>(line))));
}

}  // namespace gov::test
