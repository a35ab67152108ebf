// A shape error (compiler/check/schema.hpp: an unknown property, a value of the wrong kind, an
// unknown choice) drops no declaration, so the checker still runs and reports the problems of
// every other declaration in the same run. What it finds inside a declaration with a shape
// error is held back (check.hpp): those findings may be the shape error again in other words.
#include <algorithm>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "compiler/check/schema.hpp"
#include "compiler/driver/driver.hpp"
#include "tests/support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using gov::Diagnostic;
using gov::Span;

/// The spans of every property value of a file, nested blocks and maps included.
void collect_values(const gov::ast::Value& value, std::vector<const gov::ast::Value*>& out);

void collect_properties(const std::vector<gov::ast::Property>& properties, std::vector<const gov::ast::Value*>& out) {
  for (const gov::ast::Property& p : properties) collect_values(*p.value, out);
}

void collect_values(const gov::ast::Value& value, std::vector<const gov::ast::Value*>& out) {
  out.push_back(&value);
  for (const gov::ast::Value& v : value.list) collect_values(v, out);
  for (const gov::ast::MapEntry& e : value.map) collect_values(*e.value, out);
  collect_properties(value.block, out);
}

template <typename Items>
void collect_items(const Items& items, std::vector<const gov::ast::Value*>& out) {
  for (const auto& item : items) {
    std::visit(
        [&](const auto& i) {
          using Item = std::decay_t<decltype(i)>;
          if constexpr (std::is_same_v<Item, gov::ast::Property>) collect_values(*i.value, out);
          if constexpr (std::is_same_v<Item, gov::ast::Quota>) collect_properties(i.properties, out);
        },
        item);
  }
}

std::vector<const gov::ast::Value*> values_of(const gov::ast::File& file) {
  std::vector<const gov::ast::Value*> out;
  for (const gov::ast::Declaration& d : file.declarations) {
    if (const auto* c = std::get_if<gov::ast::Cluster>(&d)) collect_properties(c->properties, out);
    if (const auto* p = std::get_if<gov::ast::Policy>(&d)) collect_items(p->items, out);
    if (const auto* t = std::get_if<gov::ast::Team>(&d)) collect_items(t->items, out);
    if (const auto* c = std::get_if<gov::ast::Cohort>(&d)) collect_items(c->items, out);
    if (const auto* t = std::get_if<gov::ast::Test>(&d)) {
      for (const gov::ast::Step& step : t->steps) collect_properties(step.properties, out);
    }
  }
  return out;
}

/// `example` (a file of policies/examples) checked from memory with every shipped catalog.
std::unique_ptr<gov::driver::Policy> checked_example(const std::string& name, std::string text) {
  gov::check::MemorySources files;
  for (const std::string& catalog : gov::test::files_under("policies/catalog", ".gov")) {
    files.add("catalog/" + fs::path(catalog).filename().string(), gov::test::read_text(catalog));
  }
  files.add("examples/" + name, std::move(text));
  auto loaded = gov::driver::load(gov::driver::Source::memory(std::move(files), "examples/" + name),
                                  gov::driver::Request::up_to(gov::driver::Stage::check));
  return std::move(loaded.policy);
}

std::string listed(const gov::Diagnostics& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics.items()) out += std::string(gov::code_info(d.code).id) + " " + d.message + "\n";
  return out;
}

}  // namespace

TEST_CASE("a value of the wrong kind in an example policy causes no error but its own", "[check][schema]") {
  size_t mutants = 0;
  for (const std::string& path : gov::test::files_under("policies/examples", ".gov")) {
    const std::string name = fs::path(path).filename().string();
    const std::string text = gov::test::read_text(path);
    const auto original = checked_example(name, text);
    REQUIRE(original);
    REQUIRE(original->checked.ok());
    const gov::check::Program parsed = gov::test::program_from_text(name, text);
    for (const gov::ast::Value* value : values_of(parsed.files.at(0).ast)) {
      // A string where a string goes would be no shape error: put a number there instead.
      const std::string wrong = value->kind == gov::ast::Value::Kind::string ? "7" : "\"wrong\"";
      const std::string mutant =
          text.substr(0, value->span.begin) + wrong + text.substr(value->span.end);
      const auto checked = checked_example(name, mutant);
      REQUIRE(checked);
      const gov::Diagnostics all = checked->checked.diagnostics();
      const bool shaped = std::any_of(all.items().begin(), all.items().end(),
                                      [](const Diagnostic& d) { return gov::check::is_shape_error(d.code); });
      if (!shaped) continue;  // the value was accepted after all (a number where text also goes)
      ++mutants;
      INFO(name << ": `" << text.substr(value->span.begin, value->span.end - value->span.begin) << "` -> " << wrong
                << "\n" << listed(all));
      for (const Diagnostic& d : all.items()) {
        if (d.severity == gov::Severity::error) CHECK(gov::check::is_shape_error(d.code));
      }
    }
  }
  INFO(mutants << " mutants");
  CHECK(mutants > 200);
  WARN(mutants);
}

TEST_CASE("a shape error does not hide name errors in other declarations", "[check][schema]") {
  const auto checked = checked_example("p.gov", R"(import "../catalog/aws-ml.gov"

cluster c {
  catalog  = aws-ml
  capacity = { ml.g5.8xlarge: 2 }
}

policy {}

team a {
  quota ml.g5.8xlarge { instances = 1 }
  sharing = lendd
}

rule r { when task.gpuz > 8 deny "too big" }
)");
  REQUIRE(checked);
  const std::string found = listed(checked->checked.diagnostics());
  CHECK(found == "E0043 `lendd` is not a choice for `sharing`\nE0209 unknown field `task.gpuz`\n");
}

TEST_CASE("the checker's findings inside a declaration with a shape error wait for the fix", "[check][schema]") {
  // `flavors` of the wrong kind reads as absent; "lists no instance type" would say it again.
  const auto checked = checked_example("p.gov", R"(import "../catalog/aws-ml.gov"

cluster c {
  catalog  = aws-ml
  capacity = { ml.c5.xlarge: 2 }
}

policy {}

team research {
  quota ml.c5.xlarge { vcpus = 4 }
  resource-groups = { cpu: { covers = [vcpus], flavors = ml.c5.xlarge } }
}
)");
  REQUIRE(checked);
  const gov::Diagnostics all = checked->checked.diagnostics();
  REQUIRE(all.items().size() == 1);
  CHECK(all.items().front().code == gov::Code::wrong_value_kind);
}
