// GOV_ASSERT: compiled in exactly when the build sets GOV_ASSERTIONS (on in the sanitizer and
// Debug builds), in the libraries as well as here, and a failure names the file, the condition
// and the reason. The failing case runs in a forked child, so no test aborts the suite.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "compiler/support/assert.hpp"
#include "compiler/model/quantities.hpp"

namespace {

struct ChildResult {
  bool aborted = false;
  std::string stderr_text;
};

/// Runs `body` in a forked child with its stderr captured; reports whether it died of SIGABRT.
template <typename Body>
ChildResult run_in_child(Body body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildResult result;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) result.stderr_text.append(buffer, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  result.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return result;
}

}  // namespace

TEST_CASE("GOV_ASSERT evaluates its condition exactly when assertions are enabled", "[assertions]") {
  int evaluated = 0;
  GOV_ASSERT(++evaluated > 0, "the condition holds");
  CHECK(evaluated == (gov::assertions_enabled() ? 1 : 0));
}

TEST_CASE("the sanitizer builds check assertions", "[assertions]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  CHECK(gov::assertions_enabled());
#else
  SUCCEED("not a sanitizer build: GOV_ASSERTIONS is the build's choice");
#endif
}

TEST_CASE("a broken invariant in a library aborts with its file and reason when assertions are on", "[assertions]") {
  // format_decimal requires a divisor in (0, 10^18] (compiler/model/quantities.cpp); 0 breaks
  // it. Without assertions the call divides by zero instead, so the child only runs where the
  // library was built to check.
  if (!gov::assertions_enabled()) {
    SUCCEED("assertions are compiled out in this build");
    return;
  }
  const ChildResult child = run_in_child([] { (void)gov::model::format_decimal(1, 0, 3); });
  INFO(child.stderr_text);
  CHECK(child.aborted);
  CHECK(child.stderr_text.find("quantities.cpp:") != std::string::npos);
  CHECK(child.stderr_text.find("failed: divisor out of range") != std::string::npos);
}

TEST_CASE("a holding GOV_ASSERT does not abort", "[assertions]") {
  const ChildResult child = run_in_child([] { GOV_ASSERT(1 + 1 == 2, "arithmetic holds"); });
  CHECK_FALSE(child.aborted);
  CHECK(child.stderr_text.empty());
}
