// The diagnostic renderer: header, snippet, caret placement with tabs and UTF-8, notes, help.
#include <catch2/catch.hpp>

#include "compiler/diagnostics/render.hpp"

using namespace gov;

TEST_CASE("render puts the caret under the span, expanding tabs and counting code points", "[render]") {
  SourceMap sources;
  const SourceId id = sources.add("p.gov", "team a {\n\tné = 128 GB\n}\n");
  Diagnostic d = make_diagnostic(Code::unknown_unit, {id, {20, 22}}, "unknown unit `GB`", "not a unit");
  d.help = "did you mean `GiB`?";
  d.notes.push_back({Location{id, {7, 8}}, "the block opened here"});
  d.notes.push_back({std::nullopt, "units are binary"});
  CHECK(render(d, sources) ==
        "p.gov:2:11: error[E0020]: unknown unit `GB`\n"
        "  |\n"
        "2 |     né = 128 GB\n"
        "  |              ^^ not a unit\n"
        "  = note: units are binary\n"
        "  = help: did you mean `GiB`?\n"
        "note: the block opened here\n"
        " --> p.gov:1:8\n"
        "  |\n"
        "1 | team a {\n"
        "  |        ^\n");
}

TEST_CASE("render marks the end of the file and sanitises control bytes", "[render]") {
  SourceMap sources;
  const SourceId id = sources.add("p.gov", "a\x01z");
  Diagnostic d = make_diagnostic(Code::unclosed_block, {id, {3, 3}}, "missing `}`", "here");
  const std::string out = render(d, sources);
  CHECK(out.find("a\xE2\x90\x81z") != std::string::npos);  // U+2401, the picture of SOH
  CHECK(out.find("   ^ here") != std::string::npos);
}

TEST_CASE("render_all ends with a summary line", "[render]") {
  SourceMap sources;
  const SourceId id = sources.add("p.gov", "x\n");
  Diagnostics all;
  all.report(make_diagnostic(Code::expected_declaration, {id, {0, 1}}, "expected a declaration"));
  all.report(make_diagnostic(Code::expected_declaration, {id, {0, 1}}, "expected a declaration"));
  CHECK(render_all(all, sources).substr(render_all(all, sources).size() - 9) == "2 errors\n");
}

TEST_CASE("did_you_mean suggests only close matches", "[render]") {
  CHECK(did_you_mean("ml.g5.8xlarg", {"ml.g5.8xlarge", "ml.g5.4xlarge"}) == "did you mean `ml.g5.8xlarge`?");
  CHECK_FALSE(did_you_mean("banana", {"ml.g5.8xlarge"}).has_value());
}
