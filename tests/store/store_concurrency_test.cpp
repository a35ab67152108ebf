// Two processes applying at the same moment while a reader loops: every apply succeeds or
// fails cleanly (conflict, busy), no version is lost or duplicated, every read is a whole version.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "runtime/store/store.hpp"
#include "tests/store/store_fixture.hpp"

namespace gov::store {
namespace {

using test::apply_request;
using test::marked_files;

constexpr int kRounds = 50;

// One line per attempt: "ok POLICY VERSION HASH", "conflict", "busy" or "error KIND MESSAGE".
std::string outcome(const std::string& policy, const Result<ApplyResult>& result) {
  if (result) return fmt::format("ok {} {} {}", policy, result->version, result->content_sha256);
  if (result.error().kind == ErrorKind::conflict) return "conflict";
  if (result.error().kind == ErrorKind::busy) return "busy";
  return fmt::format("error {} {}", error_kind_name(result.error().kind), result.error().message);
}

// A two-process barrier: each writer signals the other on its own pipe and waits on the
// other's, so both start every round at the same moment.
struct Barrier {
  int to_other = -1;
  int from_other = -1;
  void wait() const {
    char byte = 1;
    (void)!::write(to_other, &byte, 1);
    (void)!::read(from_other, &byte, 1);
  }
};

// The body of writer `id`: waits for the start signal, then per round (in step with the other
// writer) applies to the shared policy on top of the version it read (optimistic, so one of two
// simultaneous applies meets a conflict) and to its own policy unconditionally.
[[noreturn]] void writer(const std::string& path, int id, int start_fd, Barrier barrier,
                         const std::string& report) {
  char go = 0;
  (void)!::read(start_fd, &go, 1);  // returns at EOF, when the parent closes its end
  std::ofstream out(report);
  auto store = Store::open(path);
  if (!store) {
    out << "error open " << store.error().message << "\n";
    out.close();
    ::_exit(1);
  }
  for (int round = 0; round < kRounds; ++round) {
    barrier.wait();
    std::string marker = fmt::format("w{}r{}", id, round);
    ApplyRequest shared = apply_request("shared", marked_files(marker, round % 3), "shared " + marker);
    auto seen = store->active("shared");
    if (seen) shared.expect_version = seen->number;
    out << outcome("shared", store->apply(shared)) << "\n";
    std::string own = fmt::format("own-{}", id);
    out << outcome(own, store->apply(apply_request(own, marked_files(marker), own + " " + marker)))
        << "\n";
  }
  out.close();
  ::_exit(0);
}

struct Success {
  std::string policy;
  int64_t version = 0;
  std::string hash;
};

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Reads every policy's active version while the writers run; returns the number of reads.
int read_while_writing(const std::string& path, const std::vector<pid_t>& writers,
                       std::vector<int>& statuses) {
  Store reader = test::open_or_fail(path);
  std::map<std::string, int64_t> last_seen;
  size_t running = writers.size();
  int reads = 0;
  while (running > 0) {
    for (const char* policy : {"shared", "own-0", "own-1"}) {
      auto version = reader.show(policy);
      if (!version && version.error().kind == ErrorKind::not_found) continue;  // not applied yet
      REQUIRE(version);
      ++reads;
      INFO(policy);
      REQUIRE(test::whole_version_problem(*version).empty());
      CHECK(version->info.active);
      CHECK(version->info.number >= last_seen[policy]);  // the active version never goes back
      last_seen[policy] = version->info.number;
    }
    for (size_t i = 0; i < writers.size(); ++i) {
      if (statuses[i] != -1) continue;
      int status = 0;
      if (::waitpid(writers[i], &status, WNOHANG) == writers[i]) {
        statuses[i] = status;
        --running;
      }
    }
  }
  return reads;
}

// The store's history of `policy` must be exactly the successes reported for it.
void check_history(Store& store, const std::string& policy, const std::vector<Success>& successes) {
  INFO(policy);
  std::map<int64_t, std::string> reported;
  for (const Success& success : successes) {
    if (success.policy != policy) continue;
    CHECK(reported.emplace(success.version, success.hash).second);  // never the same number twice
  }
  auto log = store.log(policy, 10'000);
  REQUIRE(log);
  int64_t expected_number = static_cast<int64_t>(log->size());
  for (const VersionInfo& info : *log) {
    CHECK(info.number == expected_number--);  // contiguous: nothing lost, nothing doubled
    auto version = store.show(policy, info.number);
    REQUIRE(version);
    CHECK(test::whole_version_problem(*version).empty());
    auto found = reported.find(info.number);
    if (found != reported.end()) CHECK(found->second == info.content_sha256);
  }
  // Every reported success is in the history (version 1 of `shared` was made before the race).
  size_t made_before = policy == "shared" ? 1 : 0;
  CHECK(log->size() == reported.size() + made_before);
  CHECK(store.audit(policy, 10'000)->size() == log->size());
}

TEST_CASE("store concurrency: two writers and a reader, 50 rounds", "[store][concurrency][backends]") {
  const Backend backend = GENERATE(from_range(test::test_backends()));
  INFO("back end: " << test::backend_name(backend));
  test::StoreLocation location(backend);
  const test::TempDir& dir = location.dir();
  const std::string path = location.url();
  {
    Store store = test::open_or_fail(path);
    REQUIRE(store.apply(apply_request("shared", marked_files("initial"), "shared initial")));
  }

  int start[2];
  int to_writer[2][2];  // to_writer[id]: the pipe writer `id` reads the other's signals from
  REQUIRE(::pipe(start) == 0);
  REQUIRE(::pipe(to_writer[0]) == 0);
  REQUIRE(::pipe(to_writer[1]) == 0);
  std::vector<pid_t> writers;
  for (int id = 0; id < 2; ++id) {
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(start[1]);
      ::close(to_writer[id][1]);  // so a dead partner means EOF, not a hang
      ::close(to_writer[1 - id][0]);
      Barrier barrier{to_writer[1 - id][1], to_writer[id][0]};
      writer(path, id, start[0], barrier, dir.path(fmt::format("writer-{}.txt", id)));
    }
    writers.push_back(child);
  }
  for (int* pipe : {start, to_writer[0], to_writer[1]}) {
    ::close(pipe[0]);
    ::close(pipe[1]);  // closing start's write end starts both writers
  }

  std::vector<int> statuses(writers.size(), -1);
  int reads = read_while_writing(path, writers, statuses);
  CHECK(reads > 0);

  std::vector<Success> successes;
  std::map<std::string, int> counts;
  for (int id = 0; id < 2; ++id) {
    CHECK(WIFEXITED(statuses[id]));
    CHECK(WEXITSTATUS(statuses[id]) == 0);
    std::vector<std::string> lines = lines_of(dir.path(fmt::format("writer-{}.txt", id)));
    CHECK(lines.size() == 2 * kRounds);
    for (const std::string& line : lines) {
      INFO(line);
      std::istringstream words(line);
      std::string word;
      words >> word;
      ++counts[word];
      REQUIRE((word == "ok" || word == "conflict" || word == "busy"));
      if (word != "ok") continue;
      Success success;
      words >> success.policy >> success.version >> success.hash;
      successes.push_back(success);
    }
  }
  UNSCOPED_INFO(fmt::format("{} reads; {} ok, {} conflicts, {} busy", reads, counts["ok"],
                            counts["conflict"], counts["busy"]));

  Store store = test::open_or_fail(path);
  check_history(store, "shared", successes);
  check_history(store, "own-0", successes);
  check_history(store, "own-1", successes);
  CHECK(test::integrity(store) == "ok");
}

}  // namespace
}  // namespace gov::store
