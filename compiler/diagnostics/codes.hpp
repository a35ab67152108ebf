// The table of every diagnostic code: stable id, name, severity and a one-line summary.
// docs/diagnostics.md mirrors this table (a test keeps them in sync).
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace gov {

enum class Severity { error, warning, note };

// X(enumerator, "code", "name", severity, "summary")
#define GOV_DIAGNOSTIC_CODES(X)                                                                     \
  X(file_too_large, "E0001", "file-too-large", error, "the file is larger than gov reads (see docs/limits.md)") \
  X(invalid_utf8, "E0002", "invalid-utf8", error, "the file is not valid UTF-8")                    \
  X(nesting_too_deep, "E0003", "nesting-too-deep", error, "expressions or values are nested deeper than gov allows") \
  X(control_character, "E0004", "control-character", error, "the file contains a control character such as NUL (anywhere, comments included)") \
  X(unterminated_string, "E0010", "unterminated-string", error, "a string is missing its closing quote before the end of the line") \
  X(invalid_escape, "E0011", "invalid-escape", error, "a string contains a backslash escape gov does not know") \
  X(unterminated_interpolation, "E0012", "unterminated-interpolation", error, "an interpolation `{...}` in a string is not closed") \
  X(unknown_unit, "E0020", "unknown-unit", error, "a quantity has a unit gov does not know (memory uses MiB, GiB, TiB; vCPU uses m)") \
  X(invalid_number, "E0021", "invalid-number", error, "a number is too large or has too many decimals") \
  X(expected_declaration, "E0030", "expected-declaration", error, "something other than a declaration stands at the top level of a file") \
  X(unclosed_block, "E0031", "unclosed-block", error, "a `{` is never closed before the end of the file") \
  X(expected_token, "E0032", "expected-token", error, "the parser expected a particular token, such as `=` or a name") \
  X(reserved_word, "E0033", "reserved-word", error, "a reserved word is used where a name is expected") \
  X(invalid_name, "E0034", "invalid-name", error, "a name uses characters other than lower-case letters, digits, hyphens and dots") \
  X(expected_expression, "E0035", "expected-expression", error, "a rule condition or operand is missing") \
  X(chained_comparison, "E0036", "chained-comparison", error, "comparisons are chained, as in `a < b < c`") \
  X(unknown_property, "E0040", "unknown-property", error, "a block has a property it does not define") \
  X(duplicate_property, "E0041", "duplicate-property", error, "a property is given twice in one block") \
  X(wrong_value_kind, "E0042", "wrong-value-kind", error, "a property's value is of the wrong kind, such as a number where a percentage is expected") \
  X(unknown_enum_value, "E0043", "unknown-enum-value", error, "a property is set to a value that is not one of its choices") \
  X(unknown_outcome, "E0044", "unknown-outcome", error, "an `expect` step names an outcome that does not exist") \
  X(clause_not_allowed, "E0045", "clause-not-allowed", error, "an `expect` clause does not apply to the expected outcome")

enum class Code {
#define GOV_X(id, code, name, severity, summary) id,
  GOV_DIAGNOSTIC_CODES(GOV_X)
#undef GOV_X
};

struct CodeInfo {
  Code code;
  std::string_view id;       // "E0020"
  std::string_view name;     // "unknown-unit": what `# gov:allow(name)` and `--allow` take
  Severity severity;         // the default severity
  std::string_view summary;  // one sentence, no final period
};

/// Every code, in table order.
std::span<const CodeInfo> all_codes();
const CodeInfo& code_info(Code code);
/// Looks a code up by id ("E0020") or name ("unknown-unit").
std::optional<CodeInfo> find_code(std::string_view id_or_name);

}  // namespace gov
