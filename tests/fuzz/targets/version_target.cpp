// Fuzz target `version`: loading a stored version whose rows were changed by someone who can
// write the store file (issue 26). A fixed store holds one applied policy (an entry file, an
// import and a cached object); the input is decoded into edits of its `version_file`,
// `source`, `version` and `object` rows (paths, text, hashes, object bytes, extra or missing
// rows), made with plain SQL as an attacker would, triggers dropped. Properties: no crash,
// hang or exhausted memory; every refusal has a message; no file is written outside the
// fuzzer's directory (the loader checks versions in memory); a version that loads has files
// that hash to its recorded content hash and paths that are plain relative paths; an object
// whose bytes were edited is never used as native code.
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/check/sources.hpp"
#include "compiler/driver/driver.hpp"
#include "runtime/signing/signing.hpp"
#include "runtime/store/store.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using gov::fuzz::ByteReader;
using gov::fuzz::require;

const char* const kPolicy =
    "import \"lib/catalog.gov\"\n"
    "cluster c {\n  catalog = small\n  capacity = { ml.g5.8xlarge: 4 }\n}\n"
    "policy {\n  task-prioritization = task-ranking\n  idle-compute = fair-share\n"
    "  priority training = 50\n}\n"
    "team team-a {\n  quota ml.g5.8xlarge { instances = 2 }\n  sharing = lend-and-borrow\n}\n"
    "rule deny-big {\n  when task.gpus > 3\n  deny \"too big for {task.team}\"\n}\n";
const char* const kCatalog =
    "catalog small {\n  instance ml.g5.8xlarge { accelerator = nvidia-a10g, gpus = 1, vcpus = 32, memory = 128 GiB }\n}\n";

/// The fuzzer's private directory (under /dev/shm where there is one), removed at exit.
const std::string& directory() {
  static const std::string path = [] {
    const std::string base = fs::exists("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
    // mkdtemp replaces the six X of its template in place with a unique suffix.
    std::string pattern = base + "/gov-fuzz-version-" + std::string(6, 'X');
    if (::mkdtemp(pattern.data()) == nullptr) gov::fuzz::fail("cannot create a temporary directory");
    static const std::string made = pattern;
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(made, ignored);
    });
    return made;
  }();
  return path;
}

std::string database_path() { return directory() + "/policies.db"; }

/// The key the template version and its object are signed with (made on the first call).
const gov::signing::KeyPair& key_pair() {
  static const gov::signing::KeyPair pair = [] {
    auto made = gov::signing::generate_key_pair();
    if (!made) gov::fuzz::fail("cannot make a key pair", made.error().message);
    return std::move(made.value());
  }();
  return pair;
}

/// The bytes of a store with the policy applied once, signed (made on the first call).
const std::string& template_bytes() {
  static const std::string bytes = [] {
    gov::store::Version version;
    version.files = {{"policy.gov", kPolicy}, {"lib/catalog.gov", kCatalog}};
    version.info.content_sha256 = gov::store::content_hash(version.files);
    gov::driver::Result checked = gov::driver::load(gov::driver::Source::version(version));
    if (!checked.ok()) gov::fuzz::fail("the template policy does not check", checked.error->message);
    gov::store::ApplyRequest request;
    request.policy = "p";
    request.author = "fuzzer";
    {
      auto store = gov::store::Store::open(database_path());
      if (!store) gov::fuzz::fail("cannot create the template store", store.error().message);
      // With this machine's native code cached, as `gov apply` leaves it.
      std::string warning;
      auto applied =
          gov::driver::apply_policy(store.value(), checked.policy->checked, request, warning, &key_pair().secret);
      if (!applied) gov::fuzz::fail("cannot apply the template policy", applied.error().message);
    }  // closed: the WAL is checkpointed into the file
    std::ifstream in(database_path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  return bytes;
}

void write_database() {
  const std::string& bytes = template_bytes();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ignored;
    fs::remove(database_path() + suffix, ignored);
  }
  std::ofstream out(database_path(), std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) gov::fuzz::fail("cannot write the database file");
}

/// A string from the input: a length byte, then that many bytes (or a few well-known
/// hostile values, so the fuzzer finds them without spelling them).
std::string take_text(ByteReader& in) {
  static const std::vector<std::string> hostile = {
      "../../x/owned.sh", "/etc/passwd", "lib/../../x.gov", "lib//catalog.gov", "./policy.gov", "",
      std::string("a\0b", 3), "lib/catalog.gov", "policy.gov", "a\nb", std::string(1100, 'a'), "lib\\catalog.gov"};
  const uint8_t length = in.byte();
  if (length >= 0xF0) return hostile[length % hostile.size()];
  std::string text;
  for (uint8_t i = 0; i < length && !in.empty(); ++i) text.push_back(static_cast<char>(in.byte()));
  return text;
}

/// Binds and runs one statement; errors (constraint violations) are fine: not every edit applies.
void run(sqlite3* db, const char* sql, const std::vector<std::string>& blobs) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) != SQLITE_OK) gov::fuzz::fail("bad SQL", sql);
  for (size_t i = 0; i < blobs.size(); ++i) {
    sqlite3_bind_blob(statement, static_cast<int>(i + 1), blobs[i].data(), static_cast<int>(blobs[i].size()),
                      SQLITE_TRANSIENT);
  }
  sqlite3_step(statement);
  sqlite3_finalize(statement);
}

struct Edits {
  bool object_changed = false;
};

/// Applies edits decoded from the input to the database, as plain SQL.
Edits edit(ByteReader& in) {
  Edits edits;
  sqlite3* db = nullptr;
  if (sqlite3_open(database_path().c_str(), &db) != SQLITE_OK) gov::fuzz::fail("cannot open the template store");
  sqlite3_exec(db,
               "DROP TRIGGER IF EXISTS version_immutable; DROP TRIGGER IF EXISTS version_file_immutable; "
               "DROP TRIGGER IF EXISTS version_file_kept;",
               nullptr, nullptr, nullptr);
  for (int step = 0; step < 8 && !in.empty(); ++step) {
    const std::string ordinal = std::to_string(in.below(3));
    switch (in.below(9)) {
      case 0:  // a file's path
        run(db, ("UPDATE version_file SET path = CAST(?1 AS TEXT) WHERE ordinal = " + ordinal).c_str(),
            {take_text(in)});
        break;
      case 1:  // a file's text
        run(db, ("UPDATE source SET text = ?1 WHERE id = (SELECT source_id FROM version_file WHERE ordinal = " +
                 ordinal + ")")
                    .c_str(),
            {take_text(in)});
        break;
      case 2:  // one byte of a file's text
        run(db,
            ("UPDATE source SET text = CAST(substr(text, 1, " + std::to_string(in.below(200)) +
             ") || CAST(?1 AS BLOB) || substr(text, " + std::to_string(in.below(200) + 2) +
             ") AS BLOB) WHERE id = (SELECT source_id FROM version_file WHERE ordinal = " + ordinal + ")")
                .c_str(),
            {std::string(1, static_cast<char>(in.byte()))});
        break;
      case 3:  // an extra file
        run(db,
            ("INSERT INTO version_file (version_id, ordinal, path, source_id) SELECT version_id, " +
             std::to_string(in.below(5) + 2) + ", CAST(?1 AS TEXT), source_id FROM version_file WHERE ordinal = 0")
                .c_str(),
            {take_text(in)});
        break;
      case 4:  // a missing file
        run(db, ("DELETE FROM version_file WHERE ordinal = " + ordinal).c_str(), {});
        break;
      case 5: {  // the recorded hash made to match the edited files, as an attacker would
        gov::store::Version files;
        if (auto store = gov::store::Store::open(database_path()); store) {
          // show() refuses invalid paths; the hash is then whatever the attacker computes.
          if (auto shown = store->show("p"); shown) files = std::move(shown.value());
        }
        if (!files.files.empty()) {
          run(db, "UPDATE version SET content_sha256 = CAST(?1 AS TEXT)", {gov::store::content_hash(files.files)});
        }
        break;
      }
      case 6:  // the recorded hash itself
        run(db, "UPDATE version SET content_sha256 = CAST(?1 AS TEXT)", {take_text(in)});
        break;
      case 7:  // the object's bytes
        run(db, "UPDATE object SET bytes = ?1", {take_text(in)});
        edits.object_changed = true;
        break;
      default:  // the object's key
        run(db, "UPDATE object SET key = CAST(?1 AS TEXT)", {take_text(in)});
        break;
    }
  }
  sqlite3_close(db);
  return edits;
}

void check_loaded(const gov::store::Version& version) {
  require(gov::store::content_hash(version.files) == version.info.content_sha256,
          "a version whose files do not match its hash checked");
  for (const gov::store::PolicyFile& file : version.files) {
    require(gov::check::normalise_logical_path(file.path) == file.path, "a version with a bad path checked", file.path);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  // Decided first, so the edits that follow are the same for either back end.
  const bool use_jit = in.below(8) == 0;
  write_database();
  const Edits edits = edit(in);
  gov::store::OpenOptions options;
  options.create = false;
  options.busy_timeout = std::chrono::milliseconds(0);
  auto store = gov::store::Store::open(database_path(), options);
  if (!store) {
    require(!store.error().message.empty(), "an open error without a message");
    return 0;
  }
  auto shown = store->show("p");
  if (shown) {
    const gov::driver::Result checked = gov::driver::load(gov::driver::Source::version(shown.value()));
    if (checked.ok()) check_loaded(shown.value());
    else require(!checked.error->message.empty(), "a refused version without a reason");
  } else {
    require(!shown.error().message.empty(), "a show error without a message");
  }
  const auto back_end = use_jit ? gov::driver::BackEnd::jit : gov::driver::BackEnd::interpreter;
  // As a controller loads it: with the verify key (the edits cannot forge a signature).
  gov::driver::VerifyOptions verify;
  verify.key = key_pair().public_key;
  gov::driver::Result loaded = gov::driver::load(gov::driver::Source::stored(store.value(), "p", std::nullopt, verify),
                                                 gov::driver::Request::running(back_end));
  if (std::getenv("GOV_FUZZ_VERBOSE")) {  // what happened to one input, when reproducing
    std::fprintf(stderr, "%s\n", loaded.ok() ? fmt::format("loaded ({}{})", loaded.policy->code == gov::driver::CodeOrigin::cached ? "cached" : "not cached: ", loaded.policy->code_note).c_str()
                                              : loaded.error->message.c_str());
  }
  if (!loaded.ok()) {
    require(loaded.error && !loaded.error->message.empty(), "a load error without a message");
    return 0;
  }
  require(!fs::exists("/x/owned.sh"), "a stored path wrote a file outside the fuzzer's directory");
  require(shown.ok(), "a version loads that show() refused");
  check_loaded(shown.value());
  // An edited object fails its digest or its signature: it never runs.
  require(!(edits.object_changed && loaded.policy->code == gov::driver::CodeOrigin::cached),
          "an edited object was used as native code");
  return 0;
}
