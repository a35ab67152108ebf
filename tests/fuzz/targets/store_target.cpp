// Fuzz target `store`: the policy store opened on arbitrary database bytes, as `gov log`,
// `gov show` and `gov apply` would open a damaged or hostile `.gov/policies.db`. Properties:
// no crash, hang or exhausted memory; every failure is an Error with a message; on a file
// that passes integrity_check, a successful apply reads back as exactly what was applied.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/store/store.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gov::store;

/// A private directory for the database file, removed at exit.
const std::string& database_path() {
  static const std::string path = [] {
    // Under /dev/shm where there is one: the millions of small writes of a fuzz run stay in
    // memory. The name ends in mkdtemp's placeholder, which mkdtemp replaces in place with a
    // unique suffix (the six letters are its required template, not a value left to fill in).
    const std::string base = fs::exists("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
    std::string pattern = base + "/gov-fuzz-store-" + std::string(6, 'X');
    if (::mkdtemp(pattern.data()) == nullptr) gov::fuzz::fail("cannot create a temporary directory");
    static const std::string directory = pattern;
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(directory, ignored);
    });
    return directory + "/policies.db";
  }();
  return path;
}

void write_database(const uint8_t* data, size_t size) {
  const std::string& path = database_path();
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::error_code ignored;
    fs::remove(path + suffix, ignored);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) gov::fuzz::fail("cannot write the database file");
}

template <typename T>
void require_message(const Result<T>& result, std::string_view doing) {
  if (result) return;
  gov::fuzz::require(!result.error().message.empty(), "an error without a message", doing);
}

/// Every read a command makes, on every policy (at most 8).
void read_everything(Store& store) {
  auto policies = store.policies();
  require_message(policies, "policies");
  require_message(store.audit("", 20), "audit");
  if (!policies) return;
  for (size_t i = 0; i < policies->size() && i < 8; ++i) {
    const PolicyInfo& policy = (*policies)[i];
    auto log = store.log(policy.name, 20);
    require_message(log, "log");
    if (log && !log->empty()) require_message(store.log(policy.name, 20, log->back().number), "log page");
    require_message(store.show(policy.name), "show active");
    require_message(store.show(policy.name, 1), "show 1");
    require_message(store.show(policy.name, policy.latest), "show latest");
    require_message(store.active(policy.name), "active");
    require_message(store.audit(policy.name, 20), "audit of a policy");
    require_message(store.get_object(policy.name, policy.latest, "x86_64"), "get_object");
  }
}

/// Writes on top of whatever the file holds; on a sound file, what was applied reads back.
void write_something(Store& store, bool sound) {
  ApplyRequest request;
  request.policy = "fuzz";
  request.files = {{"fuzz.gov", "team fuzz {}\n"}, {"lib.gov", "# lib\n"}};
  request.author = "fuzzer";
  request.message = "fuzz";
  request.object = CompiledObject{"x86_64", Bytes(16, 0xAB)};
  auto applied = store.apply(request);
  require_message(applied, "apply");
  if (applied && sound) {
    auto shown = store.show("fuzz");
    gov::fuzz::require(shown.ok(), "an applied version cannot be read back", shown ? "" : shown.error().message);
    gov::fuzz::require(shown->files == request.files, "an applied version reads back different files");
    gov::fuzz::require(shown->info.number == applied->version, "an applied version reads back another number");
    auto object = store.get_object("fuzz", applied->version, "x86_64");
    gov::fuzz::require(object.ok() && object->has_value() && **object == request.object->bytes,
                       "an applied object reads back different bytes");
  }
  if (applied) {
    require_message(store.rollback({"fuzz", 1, "fuzzer", "back", std::nullopt}), "rollback");
    require_message(store.activate("fuzz", applied->version, "fuzzer"), "activate");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_database(data, size);
  OpenOptions options;
  options.create = false;
  options.busy_timeout = std::chrono::milliseconds(0);
  {
    auto store = Store::open(database_path(), options);
    require_message(store, "open");
    if (!store) return 0;
    auto integrity = store->integrity_check();
    require_message(integrity, "integrity_check");
    read_everything(*store);
    write_something(*store, integrity.ok() && *integrity == "ok");
    read_everything(*store);
  }
  options.read_only = true;
  auto reopened = Store::open(database_path(), options);
  require_message(reopened, "reopen read-only");
  if (reopened) read_everything(*reopened);
  return 0;
}
