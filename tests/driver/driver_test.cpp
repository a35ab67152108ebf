// gov::driver: one entry point loads a policy from disk, memory and the store alike, stage by
// stage, with one error type; and `gov check -` / `gov fmt -` read standard input through it.
#include <catch2/catch.hpp>

#include <string>

#include "compiler/driver/driver.hpp"
#include "compiler/ir/printer.hpp"
#include "runtime/store/store.hpp"
#include "tests/security/security_support.hpp"
#include "tests/support/test_support.hpp"

namespace gov::driver {
namespace {

using gov::test::Scratch;

constexpr const char* kWorkshop = "policies/examples/workshop-g5.gov";

/// A policy with one error the checker finds (the parser does not): an unknown unit.
constexpr const char* kUnknownUnit = "team t {\n  quota x { memory = 128 GB }\n}\n";

Result lowered(const Source& source) { return load(source, Request::up_to(Stage::lower)); }

TEST_CASE("a policy loads alike from disk from memory and from a stored version", "[driver]") {
  const Result from_disk = lowered(Source::file(test::repo_path(kWorkshop)));
  REQUIRE(from_disk.ok());
  const Policy& disk = *from_disk.policy;
  CHECK(disk.name == "workshop-g5");
  CHECK(disk.version == 0);
  REQUIRE(disk.checked.program.files.size() == 2);  // the policy and the catalog it imports
  const std::string module = ir::print(disk.module);
  CHECK_FALSE(module.empty());

  // The same files in memory, under their logical paths.
  check::MemorySources files("memory");
  for (const store::PolicyFile& file : store_files(disk.checked)) files.add(file.path, file.text);
  const std::string entry = disk.checked.program.files.front().logical_path;
  const Result from_memory = lowered(Source::memory(std::move(files), entry));
  REQUIRE(from_memory.ok());
  CHECK(ir::print(from_memory.policy->module) == module);
  CHECK(from_memory.policy->content_sha256 == disk.content_sha256);

  // Applied, then loaded back from the store: checked from memory, the same module.
  Scratch dir("driver-store");
  auto db = store::Store::open(dir / "policies.db");
  REQUIRE(db.ok());
  store::ApplyRequest request;
  request.policy = "workshop";
  request.author = "test";
  std::string warning;
  auto applied = apply_policy(db.value(), disk.checked, request, warning);
  REQUIRE(applied.ok());
  CHECK(applied.value().content_sha256 == disk.content_sha256);
  const Result from_store = lowered(Source::stored(db.value(), "workshop"));
  REQUIRE(from_store.ok());
  CHECK(from_store.policy->name == "workshop");
  CHECK(from_store.policy->version == 1);
  CHECK(from_store.policy->content_sha256 == disk.content_sha256);
  CHECK(ir::print(from_store.policy->module) == module);
  auto shown = db.value().show("workshop", std::nullopt);
  REQUIRE(shown.ok());
  const Result from_version = lowered(Source::version(shown.value()));
  REQUIRE(from_version.ok());
  CHECK(ir::print(from_version.policy->module) == module);

  // Both back ends at Stage::run, from the store: the interpreter when asked for.
  const Result run = load(Source::stored(db.value(), "workshop"), Request::running(BackEnd::interpreter));
  REQUIRE(run.ok());
  REQUIRE(run.policy->evaluator);
  CHECK(run.policy->code == CodeOrigin::interpreter);
}

TEST_CASE("up to checking a policy's errors are diagnostics and beyond it one error of kind policy", "[driver]") {
  const Result checked = load(Source::text("unit.gov", kUnknownUnit), Request::up_to(Stage::check, false));
  REQUIRE(checked.ok());
  CHECK_FALSE(checked.policy->checked.ok());
  REQUIRE(checked.policy->checked.diagnostics().items().size() == 1);
  CHECK(checked.policy->checked.diagnostics().items()[0].code == Code::unknown_unit);

  const Result refused = load(Source::text("unit.gov", kUnknownUnit), Request::up_to(Stage::lower, false));
  REQUIRE(refused.error);
  CHECK(refused.error->kind == ErrorKind::policy);
  CHECK(refused.error->message.find("unit.gov:2:26: error[E0020]: unknown unit `GB`") != std::string::npos);
  CHECK(refused.error->message.ends_with("1 error\n"));
  REQUIRE(refused.policy);  // its diagnostics, for callers that show them their own way
  CHECK_FALSE(refused.policy->checked.ok());
  CHECK(refused.policy->module.rules.empty());
}

TEST_CASE("an unreadable entry is an io error and a missing stored policy is not_found", "[driver]") {
  const Result missing = load(Source::file("/nonexistent/dir/x.gov"));
  REQUIRE(missing.error);
  CHECK(missing.error->kind == ErrorKind::io);
  CHECK(missing.error->message == "cannot read `/nonexistent/dir/x.gov`: No such file or directory");
  CHECK_FALSE(missing.policy);

  Scratch dir("driver-missing");
  auto db = store::Store::open(dir / "policies.db");
  REQUIRE(db.ok());
  const Result absent = load(Source::stored(db.value(), "nothing"), Request::running(BackEnd::interpreter));
  REQUIRE(absent.error);
  CHECK(absent.error->kind == ErrorKind::not_found);
  const gov::support::Expected<std::string> name = resolve_policy_name(db.value(), "");
  REQUIRE_FALSE(name);
  CHECK(name.error().kind == ErrorKind::not_found);
  CHECK(name.error().message.find("has no policy yet") != std::string::npos);
}

TEST_CASE("a reload that finds the same content stops after checking", "[driver]") {
  const Source source = Source::file(test::repo_path(kWorkshop));
  const Result first = load(source, Request::running(BackEnd::interpreter));
  REQUIRE(first.ok());
  REQUIRE(first.policy->evaluator);
  Request again = Request::running(BackEnd::interpreter);
  again.unless_content_sha256 = first.policy->content_sha256;
  const Result same = load(source, again);
  REQUIRE(same.ok());
  CHECK(same.policy->unchanged);
  CHECK_FALSE(same.policy->evaluator);  // nothing lowered or built
  CHECK(same.policy->module.rules.empty());
  again.unless_content_sha256 = std::string(64, '0');
  const Result changed = load(source, again);
  REQUIRE(changed.ok());
  CHECK_FALSE(changed.policy->unchanged);
  CHECK(changed.policy->evaluator);
}

TEST_CASE("without imports only the entry file is read and parsed", "[driver]") {
  Scratch dir("driver-entry");
  const std::string entry = dir.write("p.gov", "import \"missing.gov\"\nteam t {}\n");
  Request entry_only = Request::up_to(Stage::parse);
  entry_only.follow_imports = false;
  const Result alone = load(Source::file(entry), entry_only);
  REQUIRE(alone.ok());
  CHECK(alone.policy->checked.program.files.size() == 1);
  CHECK(alone.policy->checked.program.diagnostics.items().empty());
  CHECK(alone.policy->checked.program.sources.get(0).path() == entry);

  const Result followed = load(Source::file(entry), Request::up_to(Stage::parse));
  REQUIRE(followed.ok());
  REQUIRE(followed.policy->checked.program.diagnostics.items().size() == 1);
  CHECK(followed.policy->checked.program.diagnostics.items()[0].code == Code::import_not_found);
}

TEST_CASE("a text in memory imports no file, only the shipped catalogs by name", "[driver]") {
  const Result loaded = load(Source::text("<stdin>", "import \"lib.gov\"\n"), Request::up_to(Stage::parse));
  REQUIRE(loaded.ok());
  const Diagnostics& d = loaded.policy->checked.program.diagnostics;
  REQUIRE(d.items().size() == 1);
  CHECK(d.items()[0].code == Code::import_not_found);
  CHECK(d.items()[0].message == "cannot import `lib.gov`: no such file in memory");
  // `import "aws-ml"` names the installation's catalog, which a text in memory reads as a file does.
  const Result shipped = load(Source::text("<stdin>", "import \"aws-ml\"\n"
                                                      "cluster c { catalog = aws-ml, capacity = { ml.g5.8xlarge: 4 } }\n"
                                                      "policy { priority training = 50 }\n"
                                                      "team t { quota ml.g5.8xlarge { instances = 2 } }\n"),
                              Request::up_to(Stage::check));
  REQUIRE(shipped.ok());
  CHECK(shipped.policy->checked.ok());
  CHECK(shipped.policy->checked.program.diagnostics.items().empty());
}

TEST_CASE("gov check - checks standard input", "[driver]") {
  Scratch dir("driver-stdin");
  // Alone the workshop's import of the catalog cannot be read: standard input imports nothing.
  const auto workshop = test::run_gov("check - < '" + test::repo_path(kWorkshop) + "'");
  CHECK(workshop.exit_code == 1);
  CHECK(workshop.err.find("<stdin>:7:1: error[E0208]: import of `../catalog/aws-ml.gov` leaves the policy's root "
                          "directory") != std::string::npos);
  const auto unit = test::run_gov("check - < '" + dir.write("unit.gov", kUnknownUnit) + "'");
  CHECK(unit.exit_code == 1);
  CHECK(unit.err.find("<stdin>:2:26: error[E0020]: unknown unit `GB`") != std::string::npos);
  const auto fine = test::run_gov("check - < '" + dir.write("fine.gov", "team t {}\n") + "'");
  CHECK(fine.exit_code == 0);
  CHECK(fine.err.empty());
  // Standard input is read to its end, up to 64 MiB: an endless stream is refused.
  const auto endless = test::run_gov("check - < /dev/zero");
  CHECK(endless.exit_code == 2);
  CHECK(endless.err == "error: cannot read standard input: file is larger than 67108864 bytes\n");
  // A file named `-` is still reachable as `./-`.
  const auto dashed = test::run_gov("check ./- < '" + dir.write("fine2.gov", "team t {}\n") + "'");
  CHECK(dashed.exit_code == 2);
  CHECK(dashed.err.find("cannot read `./-`") != std::string::npos);
}

TEST_CASE("gov fmt - formats standard input to standard output", "[driver]") {
  Scratch dir("driver-fmt-stdin");
  const std::string messy = dir.write("messy.gov", "team   t   {\nsharing=lend-and-borrow\n}\n");
  const auto formatted = test::run_gov("fmt - < '" + messy + "'");
  CHECK(formatted.exit_code == 0);
  CHECK(formatted.out == "team t {\n  sharing = lend-and-borrow\n}\n");
  CHECK(test::read_text(messy) == "team   t   {\nsharing=lend-and-borrow\n}\n");  // nothing written
  const auto listed = test::run_gov("fmt --check - < '" + messy + "'");
  CHECK(listed.exit_code == 1);
  CHECK(listed.out == "<stdin>\n");
  const auto syntax = test::run_gov("fmt - < '" + dir.write("broken.gov", "team {\n") + "'");
  CHECK(syntax.exit_code == 1);
  CHECK(syntax.err.find("error: `<stdin>` has syntax errors; not formatted") != std::string::npos);
  // A shape error (a misspelled key, a wrong choice) drops nothing: the file formats as written
  // (a policy author's finding, session 43: it was refused as a syntax error).
  const auto shaped = test::run_gov("fmt - < '" + dir.write("shape.gov", "team x {\n    sharng=lendd\n}\n") + "'");
  INFO(shaped.err);
  CHECK(shaped.exit_code == 0);
  CHECK(shaped.out == "team x {\n  sharng = lendd\n}\n");
}

}  // namespace
}  // namespace gov::driver
