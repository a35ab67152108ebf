// Machine-readable diagnostics: JSON and SARIF parse back with the right positions, SARIF
// rules, GitHub workflow commands and their escaping.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/diagnostics/formats.hpp"
#include "tests/check/json_reader.hpp"

using namespace gov;

namespace {

// The strict JSON reader of the tests (tests/check/json_reader.hpp).
using gov::test::Json;

Json parse_json(std::string_view text) {
  if (find_invalid_utf8(text) != std::string_view::npos) throw std::runtime_error("JSON: invalid UTF-8");
  return gov::test::JsonReader(text).document();
}

// Line 1: "team a {", line 2: a tab and `né` (é is two bytes) before `GB` at bytes 20..22,
// which is line 2, column 11 in code points (12 if bytes were counted).
constexpr std::string_view kText = "team a {\n\tné = 128 GB\n}\n";
constexpr Span kGb{20, 22};

struct Fixture {
  SourceMap sources;
  SourceId id = sources.add("policies/team.gov", std::string(kText));
};

}  // namespace

TEST_CASE("the JSON reader of this test rejects what is not JSON", "[formats]") {
  CHECK_NOTHROW(parse_json(R"({"a":[1,-2.5e3,true,false,null,"\u00e9\ud83d\ude00"]})"));
  CHECK(parse_json(R"("\ud83d\ude00")").str() == "\xF0\x9F\x98\x80");
  for (const char* bad : {"", "{", "{\"a\":1,}", "[1 2]", "\"a\x01\"", "\"\\x\"", "01", "{\"a\":1}x",
                          "\"\xFF\"", "{\"a\":1,\"a\":2}", "\"\\ud800\""}) {
    INFO(bad);
    CHECK_THROWS(parse_json(bad));
  }
}

TEST_CASE("render_json reports positions in code points, 1-based, with byte offsets", "[formats]") {
  Fixture f;
  Diagnostics all;
  Diagnostic& d = all.report(make_diagnostic(Code::unknown_unit, Location{f.id, kGb}, "unknown unit `GB`", "not a unit"));
  d.help = "did you mean `GiB`?";
  d.notes.push_back({Location{f.id, Span{7, 8}}, "the block opened here"});
  d.notes.push_back({std::nullopt, "units are binary"});
  Diagnostic& w = all.report(make_diagnostic(Code::duplicate_property, Location{f.id, Span{24, 24}}, "twice"));
  w.severity = Severity::warning;

  const std::string out = render_json(all, f.sources);
  CHECK(out.find('\n') == out.size() - 1);  // one line
  const Json doc = parse_json(out);
  CHECK(doc.keys == std::vector<std::string>{"diagnostics", "errors", "warnings"});
  CHECK(doc["errors"].integer() == 1);
  CHECK(doc["warnings"].integer() == 1);
  REQUIRE(doc["diagnostics"].size() == 2);

  const Json& first = doc["diagnostics"][0];
  CHECK(first.keys == std::vector<std::string>{"code", "name", "severity", "message", "file", "span", "label", "help", "notes"});
  CHECK(first["code"].str() == "E0020");
  CHECK(first["name"].str() == "unknown-unit");
  CHECK(first["severity"].str() == "error");
  CHECK(first["message"].str() == "unknown unit `GB`");
  CHECK(first["file"].str() == "policies/team.gov");
  CHECK(first["label"].str() == "not a unit");
  CHECK(first["help"].str() == "did you mean `GiB`?");
  const Json& start = first["span"]["start"];
  const Json& end = first["span"]["end"];
  CHECK(start["line"].integer() == 2);
  CHECK(start["column"].integer() == 11);
  CHECK(start["offset"].integer() == 20);
  CHECK(end["line"].integer() == 2);
  CHECK(end["column"].integer() == 13);
  CHECK(end["offset"].integer() == 22);

  REQUIRE(first["notes"].size() == 2);
  const Json& located = first["notes"][0];
  CHECK(located["message"].str() == "the block opened here");
  CHECK(located["file"].str() == "policies/team.gov");
  CHECK(located["span"]["start"]["line"].integer() == 1);
  CHECK(located["span"]["start"]["column"].integer() == 8);
  CHECK(located["span"]["end"]["column"].integer() == 9);
  const Json& bare = first["notes"][1];
  CHECK(bare["message"].str() == "units are binary");
  CHECK_FALSE(bare.has("file"));
  CHECK_FALSE(bare.has("span"));

  const Json& second = doc["diagnostics"][1];
  CHECK(second["severity"].str() == "warning");
  CHECK(second["code"].str() == "E0041");
  CHECK_FALSE(second.has("help"));
  CHECK(second["label"].str().empty());
  CHECK(second["notes"].size() == 0);
  CHECK(second["span"]["start"]["line"].integer() == 3);  // "}" on line 3
  CHECK(second["span"]["start"]["column"].integer() == 2);
  CHECK(second["span"]["end"]["offset"].integer() == 24);
}

TEST_CASE("render_json clamps spans past the end of the file", "[formats]") {
  Fixture f;
  Diagnostics all;
  all.report(make_diagnostic(Code::unclosed_block, Location{f.id, Span{500, 400}}, "missing `}`"));
  const Json span = parse_json(render_json(all, f.sources))["diagnostics"][0]["span"];
  CHECK(span["start"]["offset"].integer() == static_cast<long>(kText.size()));
  CHECK(span["end"]["offset"].integer() == static_cast<long>(kText.size()));
  CHECK(span["start"]["line"].integer() == 4);
  CHECK(span["start"]["column"].integer() == 1);
}

TEST_CASE("render_json escapes every string so it round-trips as valid UTF-8 JSON", "[formats]") {
  SourceMap sources;
  const std::string path = "dir \"q\"\\x.gov";
  const SourceId id = sources.add(path, "x\n");
  const std::string nasty = "say \"hi\" \\ back\nslash\ttab\r\x01\x1f\x7f é \xE2\x80\xA8 end";
  Diagnostics all;
  Diagnostic& d = all.report(make_diagnostic(Code::expected_token, Location{id, Span{0, 1}}, nasty, nasty));
  d.help = "a\nb";
  d.notes.push_back({std::nullopt, "bad bytes \xFF\xC0\xAF and a cut \xE2\x82"});

  const std::string out = render_json(all, sources);
  CHECK(find_invalid_utf8(out) == std::string::npos);
  for (const char c : out.substr(0, out.size() - 1)) CHECK(static_cast<unsigned char>(c) >= 0x20);
  const Json doc = parse_json(out);
  const Json& first = doc["diagnostics"][0];
  CHECK(first["message"].str() == nasty);
  CHECK(first["label"].str() == nasty);
  CHECK(first["help"].str() == "a\nb");
  CHECK(first["file"].str() == path);
  // Each byte that is not UTF-8 becomes one U+FFFD.
  CHECK(first["notes"][0]["message"].str() ==
        "bad bytes \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD and a cut \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("render_json and render_sarif of no diagnostics", "[formats]") {
  SourceMap sources;
  CHECK(render_json(Diagnostics{}, sources) == "{\"diagnostics\":[],\"errors\":0,\"warnings\":0}\n");
  const Json sarif = parse_json(render_sarif(Diagnostics{}, sources, "0.1.0"));
  CHECK(sarif["runs"][0]["tool"]["driver"]["rules"].size() == 0);
  CHECK(sarif["runs"][0]["results"].kind == Json::Kind::array);
  CHECK(sarif["runs"][0]["results"].size() == 0);
  CHECK(render_github(Diagnostics{}, sources).empty());
}

TEST_CASE("render_sarif is SARIF 2.1.0 with one rule per code used", "[formats]") {
  Fixture f;
  const SourceId other = f.sources.add("sub\\dir/my policy#1.gov", "a\nbc\n");
  Diagnostics all;
  Diagnostic& unit = all.report(make_diagnostic(Code::unknown_unit, Location{f.id, kGb}, "unknown unit `GB`", "not a unit"));
  unit.help = "did you mean `GiB`?";
  unit.notes.push_back({std::nullopt, "units are binary"});
  unit.notes.push_back({Location{f.id, Span{7, 8}}, "the block opened here"});
  all.report(make_diagnostic(Code::unclosed_block, Location{f.id, Span{0, 11}}, "spans two lines"));
  Diagnostic& empty = all.report(make_diagnostic(Code::unknown_unit, Location{other, Span{3, 3}}, "empty span"));
  empty.severity = Severity::note;
  Diagnostic& warn = all.report(make_diagnostic(Code::unclosed_block, Location{other, Span{0, 1}}, "a warning"));
  warn.severity = Severity::warning;

  const std::string out = render_sarif(all, f.sources, "1.2.3");
  const Json doc = parse_json(out);
  CHECK(doc["$schema"].str() == "https://json.schemastore.org/sarif-2.1.0.json");
  CHECK(doc["version"].str() == "2.1.0");
  REQUIRE(doc["runs"].size() == 1);
  const Json& run = doc["runs"][0];
  CHECK(run["columnKind"].str() == "unicodeCodePoints");
  const Json& driver = run["tool"]["driver"];
  CHECK(driver["name"].str() == "gov");
  CHECK(driver["version"].str() == "1.2.3");
  CHECK(driver["informationUri"].str() == "https://github.com/gov-policy/gov");

  const Json& rules = driver["rules"];
  REQUIRE(rules.size() == 2);  // four diagnostics, two distinct codes, in order of first use
  CHECK(rules[0]["id"].str() == "E0020");
  CHECK(rules[0]["name"].str() == "unknown-unit");
  CHECK(rules[0]["shortDescription"]["text"].str() == code_info(Code::unknown_unit).summary);
  CHECK(rules[0]["helpUri"].str() == "https://github.com/gov-policy/gov/blob/main/docs/diagnostics.md#e0020");
  CHECK(rules[0]["defaultConfiguration"]["level"].str() == "error");
  CHECK(rules[1]["id"].str() == "E0031");
  CHECK(rules[1]["helpUri"].str() == "https://github.com/gov-policy/gov/blob/main/docs/diagnostics.md#e0031");

  const Json& results = run["results"];
  REQUIRE(results.size() == 4);
  for (size_t i = 0; i < results.size(); ++i) {
    const Json& result = results[i];
    const Json& rule = rules[static_cast<size_t>(result["ruleIndex"].integer())];
    CHECK(rule["id"].str() == result["ruleId"].str());
  }
  CHECK(results[0]["ruleIndex"].integer() == 0);
  CHECK(results[1]["ruleIndex"].integer() == 1);
  CHECK(results[2]["ruleIndex"].integer() == 0);
  CHECK(results[3]["ruleIndex"].integer() == 1);
  CHECK(results[0]["level"].str() == "error");
  CHECK(results[2]["level"].str() == "note");
  CHECK(results[3]["level"].str() == "warning");
  CHECK(results[0]["message"]["text"].str() == "unknown unit `GB` (note: units are binary) (help: did you mean `GiB`?)");
  CHECK(results[1]["message"]["text"].str() == "spans two lines");

  const Json& location = results[0]["locations"][0]["physicalLocation"];
  CHECK(location["artifactLocation"]["uri"].str() == "policies/team.gov");
  const Json& region = location["region"];
  CHECK(region["startLine"].integer() == 2);
  CHECK(region["startColumn"].integer() == 11);
  CHECK(region["endLine"].integer() == 2);
  CHECK(region["endColumn"].integer() == 13);  // exclusive: `GB` is columns 11 and 12
  CHECK(region["message"]["text"].str() == "not a unit");

  // Only notes with a location become related locations.
  REQUIRE(results[0]["relatedLocations"].size() == 1);
  const Json& related = results[0]["relatedLocations"][0];
  CHECK(related["message"]["text"].str() == "the block opened here");
  CHECK(related["physicalLocation"]["region"]["startLine"].integer() == 1);
  CHECK(related["physicalLocation"]["region"]["startColumn"].integer() == 8);
  CHECK(related["physicalLocation"]["region"]["endColumn"].integer() == 9);
  CHECK_FALSE(results[1].has("relatedLocations"));

  const Json& two_lines = results[1]["locations"][0]["physicalLocation"]["region"];
  CHECK(two_lines["startLine"].integer() == 1);
  CHECK(two_lines["startColumn"].integer() == 1);
  CHECK(two_lines["endLine"].integer() == 2);
  CHECK(two_lines["endColumn"].integer() == 3);  // byte 11 is `é`, the third code point of line 2

  const Json& empty_location = results[2]["locations"][0]["physicalLocation"];
  CHECK(empty_location["artifactLocation"]["uri"].str() == "sub/dir/my%20policy%231.gov");
  CHECK(empty_location["region"]["startLine"].integer() == 2);
  CHECK(empty_location["region"]["startColumn"].integer() == 2);
  CHECK(empty_location["region"]["endLine"].integer() == 2);
  CHECK(empty_location["region"]["endColumn"].integer() == 3);  // an empty span covers one column
  CHECK_FALSE(empty_location["region"].has("message"));
}

TEST_CASE("render_sarif keeps messages intact through JSON", "[formats]") {
  Fixture f;
  Diagnostics all;
  const std::string nasty = "\"quoted\" \\ line\nbreak \x02";
  all.report(make_diagnostic(Code::unknown_unit, Location{f.id, kGb}, nasty));
  const Json doc = parse_json(render_sarif(all, f.sources, "0.1.0"));
  CHECK(doc["runs"][0]["results"][0]["message"]["text"].str() == nasty);
}

TEST_CASE("render_github writes one workflow command per diagnostic with real positions", "[formats]") {
  Fixture f;
  Diagnostics all;
  Diagnostic& d = all.report(make_diagnostic(Code::unknown_unit, Location{f.id, kGb}, "unknown unit `GB`", "not a unit"));
  d.help = "did you mean `GiB`?";
  Diagnostic& w = all.report(make_diagnostic(Code::duplicate_property, Location{f.id, Span{24, 24}}, "twice"));
  w.severity = Severity::warning;
  Diagnostic& n = all.report(make_diagnostic(Code::unclosed_block, Location{f.id, Span{0, 11}}, "spans two lines"));
  n.severity = Severity::note;

  CHECK(render_github(all, f.sources) ==
        "::error file=policies/team.gov,line=2,col=11,endLine=2,endColumn=13,title=E0020 unknown-unit::"
        "unknown unit `GB`%0Ahelp: did you mean `GiB`?\n"
        "::warning file=policies/team.gov,line=3,col=2,endLine=3,endColumn=3,title=E0041 duplicate-property::"
        "twice\n"
        "::notice file=policies/team.gov,line=1,endLine=2,title=E0031 unclosed-block::spans two lines\n");
}

TEST_CASE("render_github escapes data and property values as the runner expects", "[formats]") {
  SourceMap sources;
  const SourceId id = sources.add("a,b:c%d\n.gov", "x\n");
  Diagnostics all;
  Diagnostic& d = all.report(
      make_diagnostic(Code::expected_token, Location{id, Span{0, 1}}, "100% sure: a, b\r\nnext line \xFF"));
  d.help = "use `::` or `%0A`";

  const std::string out = render_github(all, sources);
  CHECK(out ==
        "::error file=a%2Cb%3Ac%25d%0A.gov,line=1,col=1,endLine=1,endColumn=2,title=E0032 expected-token::"
        "100%25 sure: a, b%0D%0Anext line \xEF\xBF\xBD%0Ahelp: use `::` or `%250A`\n");
  CHECK(find_invalid_utf8(out) == std::string::npos);
  CHECK(out.find('\n') == out.size() - 1);  // no message can start a second command
  CHECK(out.find('\r') == std::string::npos);
}
