// The Catch2 main of the test executables: registers the run-time cases (corpus blocks,
// golden files: tests/support/dynamic_cases.hpp), then runs the session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/support/dynamic_cases.hpp"

int main(int argc, char* argv[]) {
  gov::test::run_registrars();
  return Catch::Session().run(argc, argv);
}
