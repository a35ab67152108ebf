// The type checker's resolved quotas (docs/semantics.md §2) against the shipped catalog: what a
// team writes becomes nominal, borrowing and lending limits in base units (millicores of
// vCPU, MiB of memory), exactly as HyperPod's ClusterQueues show them. Also imports through
// the driver, and independent errors reported once each.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "compiler/check/check.hpp"
#include "compiler/diagnostics/render.hpp"
#include "tests/support/test_support.hpp"

namespace {

using gov::check::CheckResult;
using gov::check::Program;
using gov::check::Quota;
using gov::check::Team;
namespace model = gov::model;

constexpr model::Amount GiB = 1024;     // MiB
constexpr model::Amount vCPU = 1000;    // millicores

const std::string& catalog_text() {
  static const std::string text = gov::test::read_text(gov::test::repo_path("policies/catalog/aws-ml.gov"));
  return text;
}

/// A one-file program: the shipped catalog, a cluster with every type the tests use, and `body`.
struct Checked {
  Program program;
  CheckResult result;

  std::string rendered() const {
    gov::Diagnostics all = program.diagnostics;
    all.append(result.diagnostics);
    return gov::render_all(all, program.sources);
  }
  const Team& team(const std::string& name) const {
    for (const Team& t : result.policy.teams) {
      if (t.name == name) return t;
    }
    FAIL("no team " << name << "\n" << rendered());
    throw std::logic_error("unreachable");
  }
  const Quota& quota(const std::string& team_name, const std::string& type) const {
    for (const Quota& q : team(team_name).quotas) {
      if (q.type_name == type) return q;
    }
    FAIL("team " << team_name << " has no quota for " << type << "\n" << rendered());
    throw std::logic_error("unreachable");
  }
  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const gov::Diagnostic& d : result.diagnostics.items()) out.emplace_back(gov::code_info(d.code).id);
    return out;
  }
};

std::unique_ptr<Checked> check_text(const std::string& body) {
  auto checked = std::make_unique<Checked>();
  const std::string text = catalog_text() +
                           "\ncluster test-cluster {\n  catalog = aws-ml\n"
                           "  capacity = { ml.p5.48xlarge: 4, ml.g5.2xlarge: 4, ml.g5.12xlarge: 4, ml.g6.12xlarge: 4,"
                           " ml.trn1.32xlarge: 2, ml.c5.2xlarge: 4 }\n}\n" +
                           body;
  checked->program = gov::test::program_from_text("test.gov", text);
  checked->result = gov::check::check(checked->program);
  return checked;
}

std::unique_ptr<Checked> check_clean(const std::string& body) {
  auto checked = check_text(body);
  INFO(checked->rendered());
  REQUIRE_FALSE(checked->program.diagnostics.has_errors());
  REQUIRE(checked->result.ok());
  return checked;
}

model::Amount at(const model::Resources& r, model::Resource which) { return r[model::index(which)]; }

using R = model::Resource;

/// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& relative, const std::string& text) const {
    const auto file = path / relative;
    std::filesystem::create_directories(file.parent_path());
    gov::test::write_text(file.string(), text);
    return file.string();
  }
};

}  // namespace

TEST_CASE("2 GPUs of ml.p5.48xlarge resolve to a quarter of the instance", "[check]") {
  auto c = check_clean("team t { quota ml.p5.48xlarge { gpus = 2 } }\n");
  const Quota& q = c->quota("t", "ml.p5.48xlarge");
  CHECK_FALSE(q.instances.has_value());
  CHECK(at(q.nominal, R::gpu) == 2);
  CHECK(at(q.nominal, R::vcpu) == 48 * vCPU);
  CHECK(at(q.nominal, R::vcpu) == 48000);
  CHECK(at(q.nominal, R::memory) == 512 * GiB);
  CHECK(at(q.nominal, R::memory) == 524288);
  CHECK(at(q.nominal, R::efa) == 8);  // 32 EFA interfaces × 2/8
  CHECK(at(q.nominal, R::neuron) == 0);
}

TEST_CASE("2 GPUs of the one-GPU ml.g5.2xlarge resolve to two instances' worth", "[check]") {
  auto c = check_clean("team t { quota ml.g5.2xlarge { gpus = 2 } }\n");
  const Quota& q = c->quota("t", "ml.g5.2xlarge");
  CHECK(at(q.nominal, R::gpu) == 2);
  CHECK(at(q.nominal, R::vcpu) == 16 * vCPU);
  CHECK(at(q.nominal, R::memory) == 64 * GiB);
  CHECK(at(q.nominal, R::efa) == 0);
}

TEST_CASE("fine-grained.gov: onlygputeam on ml.g6.12xlarge", "[check]") {
  const Program program =
      gov::test::program_from_file(gov::test::repo_path("policies/examples/fine-grained.gov"), gov::test::repo_path(""));
  REQUIRE_FALSE(program.read_failed);
  REQUIRE_FALSE(program.diagnostics.has_errors());
  REQUIRE(program.files.size() == 2);  // the example and the catalog it imports
  const CheckResult result = gov::check::check(program, {/*require_cluster=*/true});
  INFO(gov::render_all(result.diagnostics, program.sources));
  REQUIRE(result.ok());
  const Team* team = nullptr;
  for (const Team& t : result.policy.teams) {
    if (t.name == "onlygputeam") team = &t;
  }
  REQUIRE(team != nullptr);
  REQUIRE(team->quotas.size() == 1);
  const Quota& q = team->quotas[0];
  CHECK(q.type_name == "ml.g6.12xlarge");
  // nominal / borrowing limit: gpu 2/1, vcpu 48/24, memory 192/96 GiB, efa 1/0.
  CHECK(at(q.nominal, R::gpu) == 2);
  CHECK(at(q.borrowing_limit, R::gpu) == 1);
  CHECK(at(q.nominal, R::vcpu) == 48 * vCPU);
  CHECK(at(q.borrowing_limit, R::vcpu) == 24 * vCPU);
  CHECK(at(q.nominal, R::memory) == 192 * GiB);
  CHECK(at(q.borrowing_limit, R::memory) == 96 * GiB);
  CHECK(at(q.nominal, R::efa) == 1);
  CHECK(at(q.borrowing_limit, R::efa) == 0);
  for (R r : model::kAllResources) CHECK(at(q.lending_limit, r) == model::kUnlimited);
}

TEST_CASE("whole instances give every resource of that many instances", "[check]") {
  auto c = check_clean(
      "team t {\n"
      "  quota ml.g5.12xlarge { instances = 3 }\n"
      "  quota ml.trn1.32xlarge { instances = 2 }\n"
      "  quota ml.c5.2xlarge { instances = 4 }\n"
      "  borrow-limit = 0%\n"
      "}\n");
  const Quota& g5 = c->quota("t", "ml.g5.12xlarge");
  REQUIRE(g5.instances.has_value());
  CHECK(*g5.instances == 3);
  CHECK(at(g5.nominal, R::gpu) == 12);
  CHECK(at(g5.nominal, R::neuron) == 0);
  CHECK(at(g5.nominal, R::vcpu) == 144 * vCPU);
  CHECK(at(g5.nominal, R::memory) == 576 * GiB);
  CHECK(at(g5.nominal, R::efa) == 3);
  const Quota& trn = c->quota("t", "ml.trn1.32xlarge");
  CHECK(at(trn.nominal, R::gpu) == 0);
  CHECK(at(trn.nominal, R::neuron) == 32);
  CHECK(at(trn.nominal, R::vcpu) == 256 * vCPU);
  CHECK(at(trn.nominal, R::memory) == 1024 * GiB);
  CHECK(at(trn.nominal, R::efa) == 16);
  const Quota& cpu = c->quota("t", "ml.c5.2xlarge");
  CHECK(at(cpu.nominal, R::gpu) == 0);
  CHECK(at(cpu.nominal, R::vcpu) == 32 * vCPU);
  CHECK(at(cpu.nominal, R::memory) == 64 * GiB);
  for (const Quota* q : {&g5, &trn, &cpu}) {
    for (R r : model::kAllResources) CHECK(at(q->borrowing_limit, r) == 0);  // 0%
  }
}

TEST_CASE("fine-grained quotas follow the largest ratio of what is given", "[check]") {
  auto c = check_clean(
      "team t {\n"
      "  quota ml.trn1.32xlarge { neuron = 4 }\n"       // 4/16 of 128 vCPU, 512 GiB, 8 EFA
      "  quota ml.g5.12xlarge { memory = 64 GiB }\n"    // 1/3 of the instance; no GPUs given
      "  quota ml.g6.12xlarge { gpus = 1, vcpus = 36 }\n"  // 1/4 < 36/48 = 3/4
      "  quota ml.c5.2xlarge { vcpus = 500m }\n"        // 1/16 of 16 GiB = 1 GiB
      "}\n");
  const Quota& trn = c->quota("t", "ml.trn1.32xlarge");
  CHECK(at(trn.nominal, R::neuron) == 4);
  CHECK(at(trn.nominal, R::vcpu) == 32 * vCPU);
  CHECK(at(trn.nominal, R::memory) == 128 * GiB);
  CHECK(at(trn.nominal, R::efa) == 2);
  const Quota& g5 = c->quota("t", "ml.g5.12xlarge");
  CHECK(at(g5.nominal, R::gpu) == 0);  // unspecified accelerators are 0
  CHECK(at(g5.nominal, R::memory) == 64 * GiB);
  CHECK(at(g5.nominal, R::vcpu) == 16 * vCPU);
  CHECK(at(g5.nominal, R::efa) == 0);  // floor(1/3)
  const Quota& g6 = c->quota("t", "ml.g6.12xlarge");
  CHECK(at(g6.nominal, R::gpu) == 1);
  CHECK(at(g6.nominal, R::vcpu) == 36 * vCPU);
  CHECK(at(g6.nominal, R::memory) == 144 * GiB);
  const Quota& cpu = c->quota("t", "ml.c5.2xlarge");
  CHECK(at(cpu.nominal, R::vcpu) == 500);
  CHECK(at(cpu.nominal, R::memory) == 1 * GiB);
}

TEST_CASE("percentage borrow limits round down to the base unit", "[check]") {
  auto c = check_clean(
      "team fifty { quota ml.g5.12xlarge { gpus = 3 }\n borrow-limit = 50% }\n"
      "team ten { quota ml.g6.12xlarge { gpus = 2 }\n borrow-limit = 10% }\n"
      "team default { quota ml.p5.48xlarge { instances = 1 } }\n");
  const Quota& fifty = c->quota("fifty", "ml.g5.12xlarge");
  CHECK(at(fifty.borrowing_limit, R::gpu) == 1);               // 1.5 -> 1
  CHECK(at(fifty.nominal, R::vcpu) == 36 * vCPU);
  CHECK(at(fifty.borrowing_limit, R::vcpu) == 18 * vCPU);
  CHECK(at(fifty.borrowing_limit, R::efa) == 0);               // nominal 0 (floor 3/4)
  const Quota& ten = c->quota("ten", "ml.g6.12xlarge");
  CHECK(at(ten.borrowing_limit, R::gpu) == 0);                 // 0.2 -> 0
  CHECK(at(ten.borrowing_limit, R::vcpu) == 2400);             // 10% of 24 vCPU, exact in millicores
  CHECK(at(ten.borrowing_limit, R::memory) == 9830);           // 10% of 98304 MiB = 9830.4 -> 9830
  const Quota& def = c->quota("default", "ml.p5.48xlarge");   // the default 50%
  CHECK(c->team("default").borrow_limit_percent == 50);
  CHECK_FALSE(c->team("default").borrow_limit_given);
  CHECK(at(def.borrowing_limit, R::gpu) == 4);
  CHECK(at(def.borrowing_limit, R::memory) == 1024 * GiB);
}

TEST_CASE("absolute borrow limits replace the percentage for their resources only", "[check]") {
  auto c = check_clean(
      "team t {\n"
      "  quota ml.p5.48xlarge { instances = 1, borrow-limit = { gpus = 4, memory = 100 GiB } }\n"
      "  borrow-limit = 25%\n"
      "}\n");
  const Quota& q = c->quota("t", "ml.p5.48xlarge");
  CHECK(at(q.borrowing_limit, R::gpu) == 4);                   // absolute, not 25% of 8
  CHECK(at(q.borrowing_limit, R::memory) == 100 * GiB);        // absolute
  CHECK(at(q.borrowing_limit, R::vcpu) == 48 * vCPU);          // 25% of 192
  CHECK(at(q.borrowing_limit, R::efa) == 8);                   // 25% of 32
  CHECK(q.absolute_borrow_limit[model::index(R::gpu)]);
  CHECK(q.absolute_borrow_limit[model::index(R::memory)]);
  CHECK_FALSE(q.absolute_borrow_limit[model::index(R::vcpu)]);
  CHECK_FALSE(q.absolute_borrow_limit[model::index(R::efa)]);
}

TEST_CASE("sharing: lend borrows nothing, dont-lend lends nothing", "[check]") {
  auto c = check_clean(
      "team lender { quota ml.g5.12xlarge { instances = 1, borrow-limit = { gpus = 2 } }\n"
      "  sharing = lend }\n"
      "team keeper { quota ml.g5.12xlarge { instances = 1 }\n  sharing = dont-lend\n  borrow-limit = 100% }\n"
      "team both { quota ml.g5.12xlarge { instances = 1 }\n  sharing = lend-and-borrow }\n");
  const Quota& lender = c->quota("lender", "ml.g5.12xlarge");
  for (R r : model::kAllResources) {
    INFO("resource " << model::resource_key(r));
    CHECK(at(lender.borrowing_limit, r) == 0);  // even the absolute limit
    CHECK(at(lender.lending_limit, r) == model::kUnlimited);
  }
  const Quota& keeper = c->quota("keeper", "ml.g5.12xlarge");
  for (R r : model::kAllResources) {
    INFO("resource " << model::resource_key(r));
    CHECK(at(keeper.lending_limit, r) == 0);
    CHECK(at(keeper.borrowing_limit, r) == at(keeper.nominal, r));  // dont-lend still borrows, 100%
  }
  const Quota& both = c->quota("both", "ml.g5.12xlarge");
  CHECK(at(both.borrowing_limit, R::gpu) == 2);
  for (R r : model::kAllResources) CHECK(at(both.lending_limit, r) == model::kUnlimited);
}

TEST_CASE("independent errors are each reported once", "[check]") {
  auto c = check_text(
      "policy { priority training = 70 }\n"
      "team a {\n"
      "  quota ml.g5.8xlarg { instances = 1 }\n"    // E0203
      "  quota ml.c5.2xlarge { gpus = 1 }\n"        // E0305
      "  borrow-limit = 20000%\n"                   // E0302
      "}\n"
      "team a { borrow-limit = 10% }\n"             // E0207
      "rule r { when task.priority == trainig\n deny \"x\" }\n"  // E0205
      "test \"t\" { submit t1 { team = b, gpus = 1 }\n expect t2 admitted }\n");  // E0204, E0215
  INFO(c->rendered());
  std::vector<std::string> codes = c->codes();
  std::sort(codes.begin(), codes.end());
  CHECK(codes == std::vector<std::string>{"E0203", "E0204", "E0205", "E0207", "E0215", "E0302", "E0305"});
  // The typo gets a suggestion.
  bool suggested = false;
  for (const gov::Diagnostic& d : c->result.diagnostics.items()) {
    if (d.help && d.help->find("did you mean `ml.g5.8xlarge`?") != std::string::npos) suggested = true;
  }
  CHECK(suggested);
}

TEST_CASE("an error in an imported file is located there, with the import chain as notes", "[check]") {
  TempDir dir("gov-check-imports");
  dir.write("catalog/aws-ml.gov", catalog_text());
  dir.write("teams/bad.gov", "team b {\n  quota ml.g5.12xlarg { instances = 1 }\n}\n");
  dir.write("teams/all.gov", "import \"bad.gov\"\n");
  const std::string entry = dir.write("policy.gov",
                                      "import \"catalog/aws-ml.gov\"\nimport \"teams/all.gov\"\n"
                                      "cluster c { catalog = aws-ml\n capacity = { ml.g5.12xlarge: 1 } }\n");
  const Program program = gov::test::program_from_file(entry, dir.path.string());
  REQUIRE_FALSE(program.read_failed);
  REQUIRE(program.files.size() == 4);
  REQUIRE_FALSE(program.diagnostics.has_errors());
  const CheckResult result = gov::check::check(program);
  INFO(gov::render_all(result.diagnostics, program.sources));
  REQUIRE(result.diagnostics.items().size() == 1);
  const gov::Diagnostic& d = result.diagnostics.items()[0];
  CHECK(gov::code_info(d.code).id == "E0203");
  const gov::SourceFile& file = program.sources.get(d.primary.source);
  CHECK(file.path().find("teams/bad.gov") != std::string::npos);
  CHECK(file.line_column(d.primary.span.begin).line == 2);
  CHECK(file.line_column(d.primary.span.begin).column == 9);
  // bad.gov is imported by all.gov (line 1), which policy.gov imports (line 2).
  REQUIRE(d.notes.size() == 2);
  REQUIRE(d.notes[0].where.has_value());
  REQUIRE(d.notes[1].where.has_value());
  CHECK(program.sources.get(d.notes[0].where->source).path().find("teams/all.gov") != std::string::npos);
  CHECK(program.sources.get(d.notes[1].where->source).path() == entry);
  CHECK(program.sources.get(d.notes[1].where->source).line_column(d.notes[1].where->span.begin).line == 2);
}

TEST_CASE("import cycles, missing imports and imports outside the root", "[check]") {
  TempDir dir("gov-check-import-errors");
  dir.write("a.gov", "import \"b.gov\"\n");
  dir.write("b.gov", "import \"c.gov\"\n");
  dir.write("c.gov", "import \"a.gov\"\n");
  const std::string entry = dir.write("policy/main.gov",
                                      "import \"../a.gov\"\nimport \"../missing.gov\"\nimport \"../../outside.gov\"\n");
  const Program program = gov::test::program_from_file(entry, dir.path.string());
  INFO(gov::render_all(program.diagnostics, program.sources));
  std::vector<std::string> codes;
  for (const gov::Diagnostic& d : program.diagnostics.items()) codes.emplace_back(gov::code_info(d.code).id);
  std::sort(codes.begin(), codes.end());
  CHECK(codes == std::vector<std::string>{"E0201", "E0202", "E0208"});
  CHECK(program.files.size() == 4);  // main, a, b, c: each read once
}
