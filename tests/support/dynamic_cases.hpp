// Test cases registered at run time, one per data file or block (a corpus `test` block, a
// golden case), so that each is its own CTest entry: catch_discover_tests lists them with
// `--list-test-names-only` like any TEST_CASE.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace gov::test {

/// A function that registers cases with register_case().
using Registrar = void (*)();

/// Adds `registrar` to the functions main() calls before Catch2 reads its command line (never
/// during static initialisation, so registrars may use every library). Returns true, for a
/// namespace-scope initialiser: `const bool registered = gov::test::add_registrar(&f);`.
bool add_registrar(Registrar registrar);

/// Calls every registrar once, in the order they were added (main() does).
void run_registrars();

/// Registers a test case named safe_case_name(`name`) with Catch2 `tags` (e.g. "[corpus]")
/// that runs `body` (which uses Catch2 assertions like any TEST_CASE). A name that is already
/// taken, compared as Catch2 compares test names (ignoring case), gets ` #2`, ` #3`, ... so
/// that every case stays runnable on its own. `file` must be a string literal (__FILE__).
void register_case(std::string_view name, const std::string& tags, std::function<void()> body, const char* file,
                   int line);

/// `text` as part of a test name that Catch2's test-spec parser and CTest take literally:
/// `,` (a spec separator) is dropped, `[` `]` become `(` `)`, `;` (a CMake list separator)
/// becomes `:`, `\` becomes `/`, `"` becomes `'`, `*` (a wildcard) and any byte outside
/// printable ASCII become `_`.
std::string safe_case_name(std::string_view text);

}  // namespace gov::test
