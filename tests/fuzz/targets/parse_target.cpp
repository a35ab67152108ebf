// Fuzz target `parse`: the parser on arbitrary bytes. Properties: it returns (no crash, no
// hang, no exhausted memory), every diagnostic points inside the file, and rendering the
// diagnostics and printing the syntax tree work for whatever came back.
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "compiler/ast/printer.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/check/schema.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

void check_locations(const gov::Diagnostics& diagnostics, const gov::SourceFile& file) {
  const size_t size = file.text().size();
  for (const gov::Diagnostic& d : diagnostics.items()) {
    const gov::Span span = d.primary.span;
    gov::fuzz::require(span.begin <= span.end && span.end <= size,
                       "a diagnostic's span lies outside the file",
                       fmt::format("{} {}..{} in {} bytes", d.message, span.begin, span.end, size));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gov::SourceMap sources;
  const gov::SourceId id = sources.add("fuzz.gov", gov::fuzz::text_of(data, size));
  const gov::grammar::ParseResult result = gov::check::parse_file(sources, id);
  check_locations(result.diagnostics, sources.get(id));
  const std::string rendered = gov::render_all(result.diagnostics, sources);
  gov::fuzz::require(result.ok() || !rendered.empty(), "errors were reported but render to nothing");
  (void)gov::ast::print(result.file);
  return 0;
}
