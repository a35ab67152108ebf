// gov::kube's YAML loader and Kubernetes quantities (issues 17 and 18): the limits on input size,
// nesting and alias expansion; Kubernetes' own quantity examples, converted exactly.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/kube/quantity.hpp"
#include "compiler/kube/yaml.hpp"

using gov::kube::Conversion;
using gov::kube::Node;

namespace {

std::string load_error(const std::string& text, const gov::kube::YamlLimits& limits = {}) {
  const auto loaded = gov::kube::load_yaml(text, limits);
  return loaded ? std::string("(loaded)") : loaded.error().message;
}

/// `text` in `resource`'s base unit, or -1 when it does not convert.
int64_t base(const std::string& text, gov::Resource resource) {
  const auto q = gov::kube::parse_quantity(text);
  if (!q) return -2;
  const gov::kube::Converted c = gov::kube::to_base_units(*q, resource);
  return c.status == Conversion::ok ? c.value : -1;
}

}  // namespace

TEST_CASE("kube yaml loads documents with positions and kubectl lists", "[kube]") {
  const auto loaded = gov::kube::load_yaml("a: 1\nb: \"2\"\nc: [x, {d: null}]\n---\n---\nkind: List\nitems:\n- {kind: A}\n- {kind: B}\n");
  REQUIRE(loaded);
  REQUIRE(loaded.value().size() == 2);  // the empty document is left out
  const Node& first = loaded.value()[0];
  REQUIRE(first.is_map());
  CHECK(first.find("a")->text == "1");
  CHECK_FALSE(first.find("a")->quoted);
  CHECK(first.find("b")->quoted);
  CHECK(first.find("b")->at.line == 2);
  CHECK(first.find("b")->at.column == 4);
  CHECK(first.find("c")->items[1].find("d")->is_null());
  const auto objects = gov::kube::kubernetes_objects(loaded.value());
  REQUIRE(objects);
  REQUIRE(objects.value().size() == 3);
  CHECK(objects.value()[1].find("kind")->text == "A");
  CHECK(objects.value()[2].find("kind")->text == "B");
}

TEST_CASE("kube yaml errors carry line and column", "[kube]") {
  const auto bad = gov::kube::load_yaml("a: 1\nb: [1, 2\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().position.has_value());
  CHECK(bad.error().message.rfind("line ", 0) == 0);
  CHECK(load_error("a: 1\na: 2\n") == "line 2, column 1: duplicate key `a`");
  CHECK(load_error("base: &b {x: 1}\nuse:\n  <<: *b\n") == "line 3, column 3: merge keys (`<<`) are not read; write the entries out");
  CHECK(load_error("? [a]\n: 1\n").find("a map key must be a string") != std::string::npos);
  const auto not_object = gov::kube::kubernetes_objects(gov::kube::load_yaml("- 1\n").value());
  REQUIRE_FALSE(not_object);
  CHECK(not_object.error().message == "line 1, column 1: expected a Kubernetes object (a map), found a list");
}

TEST_CASE("kube yaml refuses input larger than its limit before parsing", "[kube]") {
  // 100 MB of YAML: the size is refused before yaml-cpp sees a byte.
  const std::string big(size_t{100} << 20, '#');
  CHECK(load_error(big) == "the input is 104857600 bytes, more than the 16777216 bytes gov reads");
}

TEST_CASE("kube yaml stops deep nesting without overflowing the stack", "[kube]") {
  // Nesting past 64 levels, in flow and in block form: an error at the 65th level.
  CHECK(load_error(std::string(70, '[') + std::string(70, ']')) == "line 1, column 65: nesting deeper than 64 levels of maps and lists");
  CHECK(load_error(std::string(70, '{')).find("nesting deeper than 64 levels") != std::string::npos);
  std::string block;
  for (int depth = 0; depth < 3000 && block.size() < (size_t{10} << 20); ++depth) block += std::string(depth, ' ') + "- \n";
  CHECK(block.size() > (size_t{4} << 20));
  CHECK(load_error(block) == "line 65, column 65: nesting deeper than 64 levels of maps and lists");
  // 64 levels are fine.
  CHECK(load_error(std::string(64, '[') + std::string(64, ']')) == "(loaded)");
}

TEST_CASE("kube yaml bounds how far the scanner reads ahead", "[kube]") {
  // 10 MB of nesting: yaml-cpp's scanner would queue a token per `[` (2.5 GB) before its parser
  // reports the first; gov stops it 1 MiB ahead of the last node.
  const std::string expected = "more than 1048576 bytes past the last node it finished";
  const std::string flow = std::string(size_t{5} << 20, '[') + std::string(size_t{5} << 20, ']');
  CHECK(load_error(flow).find("line 1, column 1052673: the YAML parser read " + expected) == 0);
  CHECK(load_error(std::string(size_t{10} << 20, '{')).find(expected) != std::string::npos);
  // A scalar longer than the lookahead, likewise; long flow lists and block lists read.
  CHECK(load_error("a: " + std::string(size_t{3} << 19, 'x') + "\n").find(expected) != std::string::npos);
  CHECK(load_error("a: " + std::string(size_t{1} << 19, 'x') + "\n") == "(loaded)");
  gov::kube::YamlLimits wide;
  wide.max_lookahead = size_t{4} << 20;
  CHECK(load_error("a: " + std::string(size_t{3} << 19, 'x') + "\n", wide) == "(loaded)");
  std::string flat = "a: [";
  while (flat.size() < (size_t{2} << 20)) flat += "x, ";
  CHECK(load_error(flat + "x]\n") == "(loaded)");
  std::string list = "a:\n";
  while (list.size() < (size_t{2} << 20)) list += "- x\n";
  CHECK(load_error(list) == "(loaded)");
}

TEST_CASE("kube yaml stops an alias bomb at its node budget", "[kube]") {
  // Billion laughs: 9 levels of 9 aliases each expand to 9^9 (387 million) strings.
  std::string bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    const std::string previous(1, static_cast<char>(level - 1));
    bomb += std::string(1, level) + ": &" + std::string(1, level) + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", *" : "*") + previous;
    bomb += "]\n";
  }
  const std::string message = load_error(bomb);
  CHECK(message.find("more than 1000000 YAML nodes (counting the copies aliases make)") != std::string::npos);
  // A few aliases are read, as copies.
  const auto small = gov::kube::load_yaml("a: &x {k: v}\nb: *x\n");
  REQUIRE(small);
  CHECK(small.value()[0].find("b")->find("k")->text == "v");
}

TEST_CASE("kube quantities read Kubernetes' own examples exactly", "[kube]") {
  using gov::Resource;
  // k8s.io/apimachinery/pkg/api/resource TestQuantityParse: binary, decimal and exponent forms.
  CHECK(base("0", Resource::gpu) == 0);
  CHECK(base("0m", Resource::vcpu) == 0);
  CHECK(base("0Ki", Resource::memory) == 0);
  CHECK(base("1Ki", Resource::memory) == -1);  // 1024 bytes: not a whole MiB
  CHECK(base("1024Ki", Resource::memory) == 1);
  CHECK(base("7Mi", Resource::memory) == 7);
  CHECK(base("6Gi", Resource::memory) == 6 * 1024);
  CHECK(base("5Ti", Resource::memory) == int64_t{5} << 20);
  CHECK(base("4Pi", Resource::memory) == int64_t{4} << 30);
  CHECK(base("3Ei", Resource::memory) == int64_t{3} << 40);
  CHECK(base("1.5Gi", Resource::memory) == 1536);
  CHECK(base("0.5Gi", Resource::memory) == 512);
  CHECK(base("1G", Resource::memory) == -1);  // 10^9 bytes is 953.67... MiB
  CHECK(base("1048576", Resource::memory) == 1);
  CHECK(base("2097152e0", Resource::memory) == 2);
  CHECK(base("3m", Resource::vcpu) == 3);
  CHECK(base("500m", Resource::vcpu) == 500);
  CHECK(base("9", Resource::vcpu) == 9000);
  CHECK(base("0.5", Resource::vcpu) == 500);
  CHECK(base(".5", Resource::vcpu) == 500);
  CHECK(base("1.", Resource::vcpu) == 1000);
  CHECK(base("1.500000000000000000000000000000000000000000000", Resource::vcpu) == 1500);
  CHECK(base("8k", Resource::vcpu) == 8'000'000);
  CHECK(base("1e3", Resource::gpu) == 1000);
  CHECK(base("1E6", Resource::gpu) == 1'000'000);
  CHECK(base("1E-3", Resource::vcpu) == 1);
  CHECK(base("1e-3", Resource::gpu) == -1);
  CHECK(base("5n", Resource::vcpu) == -1);
  CHECK(base("4u", Resource::vcpu) == -1);
  CHECK(base("1000u", Resource::vcpu) == 1);
  CHECK(base("7M", Resource::gpu) == 7'000'000);
  CHECK(base("2P", Resource::gpu) == 2'000'000'000'000'000);
  CHECK(base("1E", Resource::gpu) == 1'000'000'000'000'000'000);
  CHECK(base("+2", Resource::gpu) == 2);
  CHECK(base("1.5", Resource::gpu) == -1);
  // Overflow and negative values are errors, not wrapped numbers.
  CHECK(base("10E", Resource::gpu) == -1);
  CHECK(base("9223372036854775807", Resource::gpu) == INT64_MAX);
  CHECK(base("9223372036854775808", Resource::gpu) == -1);
  CHECK(base("8Ei", Resource::memory) == int64_t{8} << 40);
  CHECK(base("1e1000", Resource::gpu) == -1);
  CHECK(base("-1", Resource::gpu) == -1);
  const auto huge = gov::kube::parse_quantity("10E");
  REQUIRE(huge);
  CHECK(gov::kube::to_base_units(*huge, Resource::gpu).status == Conversion::overflow);
  CHECK(gov::kube::to_base_units(*gov::kube::parse_quantity("-1"), Resource::gpu).status == Conversion::negative);
  CHECK(gov::kube::to_base_units(*gov::kube::parse_quantity("1.5"), Resource::gpu).status == Conversion::not_whole);
  // Not quantities (the same test's invalid list).
  for (const char* bad : {"", " 1", "1 ", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", "1e",
                          ".", "-.", "+.", "1K", "1Gb", "1e1001", "1e+", "123456789012345678901234567890123456789012"}) {
    INFO(bad);
    CHECK_FALSE(gov::kube::parse_quantity(bad).has_value());
  }
}
