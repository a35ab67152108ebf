// The policy store commands: `gov apply`, `log`, `show`, `rollback`, and `gov diff` between
// stored versions. The store is `--db`, else $GOV_DB, else .gov/policies.db.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <pwd.h>
#include <unistd.h>

#include <fmt/format.h>

#include "compiler/check/check.hpp"
#include "compiler/diagnostics/render.hpp"
#include "compiler/diff/diff.hpp"
#include "compiler/driver/driver.hpp"
#include "compiler/support/json_writer.hpp"
#include "compiler/support/terminal_text.hpp"
#include "runtime/policy_test/policy_test.hpp"
#include "runtime/signing/signing.hpp"
#include "runtime/store/store.hpp"
#include "tools/gov/engine_support.hpp"
#include "tools/gov/commands.hpp"

namespace gov::cli {
namespace {

namespace fs = std::filesystem;

std::string db_path(const Args& args) { return args.value("db").value_or(store::default_path()); }

// Commands that only read open the store read-only: nothing is created next to it, and a
// frozen store (a read-only volume) is read as immutable (docs/store.md).
enum class Access : uint8_t { read, write, create };

/// A store path that names a zero-byte file. Only `gov apply` makes a store in one (with a notice):
/// a command that reads or changes a store refuses it and leaves it as it is, since an empty file
/// is also what a store cut short by a failed copy, restore or full disk looks like.
bool is_empty_file(const std::string& path) {
  std::error_code error;
  return !store::is_postgres_url(path) && fs::is_regular_file(path, error) && fs::file_size(path, error) == 0 && !error;
}

std::optional<store::Store> open_store(const Args& args, Access access) {
  if (access != Access::create && is_empty_file(db_path(args))) {
    fmt::print(stderr,
               "error: `{}` is an empty file, not a policy store: `gov apply FILE --db {}` makes a new store in it "
               "(if it held a store that was truncated, restore it from a backup instead: docs/store.md, \"Backup and "
               "restore\")\n",
               display_path(db_path(args)), display_path(db_path(args)));
    return std::nullopt;
  }
  store::OpenOptions options;
  options.create = access == Access::create;
  // Only the built-in location's directory is made: a mistyped --db or $GOV_DB path is an error.
  options.create_directories = db_path(args) == store::kBuiltInPath;
  options.read_only = access == Access::read;
  auto opened = store::Store::open(db_path(args), options);
  if (!opened.ok() && access == Access::read && opened.error().kind == store::ErrorKind::read_only) {
    // A store with an older schema needs an upgrade, which a read-only open cannot do: a writable
    // store is upgraded (as any command did before), a frozen one keeps the first error.
    options.read_only = false;
    auto upgraded = store::Store::open(db_path(args), options);
    if (upgraded.ok()) return std::move(upgraded.value());
  }
  if (!opened.ok()) {
    // The store's own message names the path already ("cannot open policy store `x`: ..."): not twice.
    const std::string& message = opened.error().message;
    if (message.find(fmt::format("`{}`", store::display_location(db_path(args)))) != std::string::npos) {
      fmt::print(stderr, "error: {}\n", escape_for_terminal(message));
    } else {
      fmt::print(stderr, "error: store `{}`: {}\n", display_path(store::display_location(db_path(args))),
                 escape_for_terminal(message));
    }
    return std::nullopt;
  }
  return std::move(opened.value());
}

/// A store error for people: the message names what is missing or malformed; other kinds
/// (busy, conflict, corrupt, read only, ...) lead with the kind, in words.
std::string store_error_text(const store::Error& error) {
  if (error.kind == store::ErrorKind::not_found || error.kind == store::ErrorKind::invalid)
    return escape_for_terminal(error.message);
  std::string kind(store::error_kind_name(error.kind));
  std::replace(kind.begin(), kind.end(), '_', ' ');
  return fmt::format("{}: {}", kind, escape_for_terminal(error.message));
}

/// The exit status of a store write that failed: the store's own problems (locked past the busy
/// timeout, read-only, full, damaged, I/O) are I/O problems, 2, as a store that cannot be opened is
/// (docs/interfaces.md); what the request asked that cannot be done (a conflict, an unknown
/// version, a malformed request) is the command failing, 1.
int store_failure_status(const store::Error& error) {
  switch (error.kind) {
    case store::ErrorKind::io:
    case store::ErrorKind::busy:
    case store::ErrorKind::read_only:
    case store::ErrorKind::full:
    case store::ErrorKind::corrupt:
    case store::ErrorKind::newer_schema:
      return kUsage;
    default:
      return kFailed;
  }
}

std::string author(const Args& args) {
  if (auto a = args.value("author")) return *a;
  if (const char* env = std::getenv("GOV_AUTHOR"); env && *env) return env;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name) return pw->pw_name;
  return "unknown";
}

/// The policy named by --policy, or the store's only policy.
std::optional<std::string> policy_name(store::Store& db, const Args& args) {
  support::Expected<std::string> name = driver::resolve_policy_name(db, args.value("policy").value_or(""));
  if (name) return std::move(name).value();
  fmt::print(stderr, "error: {}\n", escape_for_terminal(with_option_hint(name.error().message)));
  return std::nullopt;
}

std::optional<int64_t> version_argument(const std::string& text) {
  std::string digits = text.size() > 1 && text[0] == 'v' ? text.substr(1) : text;
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(digits);
}

std::string time_text(int64_t ms) {
  const std::time_t t = ms / 1000;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buffer;
}

std::vector<OptionSpec> store_options() {
  return {{"db", "PATH|URL", "the store: an SQLite file or a postgresql:// URL (default $GOV_DB, else .gov/policies.db)"},
          {"policy", "NAME", "the policy in the store (default: the file's name on apply; the only policy otherwise)"}};
}

// ------------------------------------------------------------------ apply

/// Runs the policy's own `test` blocks (with the reference interpreter) before it is stored:
/// Lint warnings of what was just applied, counted in one line with their codes: apply checks, it
/// does not lint, and a new author applied a quota on an instance type the cluster lacks (W0102)
/// without a word.
void note_lint_warnings(const CheckedPolicy& checked, const std::string& path) {
  const Diagnostics warnings = check::lint(checked.result.policy, checked.program);
  if (warnings.items().empty()) return;
  std::vector<std::string> codes;
  for (const Diagnostic& d : warnings.items()) codes.emplace_back(code_info(d.code).id);
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  fmt::print(stderr, "note: `gov lint {}` finds {} {} ({})\n", display_path(path), warnings.items().size(),
             warnings.items().size() == 1 ? "warning" : "warnings", fmt::join(codes, ", "));
}

/// A first version named after its file, in a store that holds other policies: most likely a
/// renamed file, whose history now forks (gov log and gov diff then ask for --policy). Said, with
/// the way to continue the other history (a new author's finding).
void note_new_policy_beside_others(store::Store& db, const std::string& policy) {
  auto listed = db.policies();
  if (!listed.ok()) return;
  std::vector<std::string> others;
  for (const store::PolicyInfo& info : listed.value()) {
    if (info.name != policy) others.push_back(escape_for_terminal(info.name));
  }
  if (others.empty()) return;
  fmt::print(stderr,
             "notice: `{}` is a new policy in this store, beside `{}` (a policy is named after its file); to continue "
             "another's history, apply with --policy {}\n",
             escape_for_terminal(policy), fmt::join(others, "`, `"), others.size() == 1 ? others.front() : "NAME");
}

/// true when all pass. Prints each failure and why nothing was applied. The engine reads the file
/// again, so its content hash must be the one about to be stored (else the file changed meanwhile).
bool own_tests_pass(const Args& args, const CheckedPolicy& checked) {
  const std::vector<check::Test>& tests = checked.result.policy.tests;
  if (tests.empty()) return true;
  const std::string& path = args.positional[0];
  Args interpreter = args;
  interpreter.options.push_back({"engine", "interp"});
  int status = kOk;
  std::optional<gov::Engine> engine = open_engine(interpreter, path, status);
  if (!engine) return false;
  if (engine->policy().content_sha256 != store::content_hash(driver::store_files(checked))) {
    fmt::print(stderr, "error: `{}` changed while it was applied; nothing applied\n", display_path(path));
    return false;
  }
  size_t failed = 0;
  for (const check::Test& test : tests) {
    const policy_test::CaseResult result = policy_test::run_case(*engine, test);
    if (result.passed()) continue;
    ++failed;
    fmt::print(stderr, "FAIL  {}: {}\n  {}: expected {}\n    but {}\n", display_path(path),
               escape_for_terminal(result.name), format_location(result.failure->where, checked.program.sources),
               escape_for_terminal(result.failure->expected), escape_for_terminal(result.failure->actual));
  }
  if (failed == 0) return true;
  fmt::print(stderr, "error: {} of the policy's {} tests failed; nothing applied (`gov test {}` for details, "
             "--skip-tests to apply anyway)\n", failed, tests.size(), display_path(path));
  return false;
}

int run_apply(const Args& args) {
  if (args.positional.size() != 1) {
    fmt::print(stderr, "error: `gov apply` takes exactly one FILE\n");
    return kUsage;
  }
  std::optional<int64_t> expect;
  if (auto e = args.value("expect-version")) {
    expect = version_argument(*e);
    if (!expect) {
      fmt::print(stderr, "error: --expect-version takes a version number, found `{}`\n", escape_for_terminal(*e));
      return kUsage;
    }
  }
  int status = kOk;
  std::unique_ptr<driver::Policy> loaded =
      load_policy(driver::Source::file(args.positional[0], root_option(args)), driver::Request::up_to(driver::Stage::check), status);
  if (!loaded) return status;
  const CheckedPolicy* checked = &loaded->checked;
  if (!checked->ok()) {
    DiagnosticPrinter printer;
    printer.add(checked->diagnostics(), checked->program.sources);
    fmt::print(stderr, "{}error: `{}` has errors; nothing applied\n", printer.text(), display_path(args.positional[0]));
    return kFailed;
  }
  const bool skip_tests = args.has("skip-tests");
  if (!skip_tests && !own_tests_pass(args, *checked)) return kFailed;
  store::ApplyRequest request;
  // A policy is named after its entry file (`workshop-g5` for policies/examples/workshop-g5.gov).
  const std::string policy = args.value("policy").value_or(fs::path(args.positional[0]).stem().string());
  request.policy = policy;
  request.author = author(args);
  request.message = args.value("message").value_or("");
  // Whoever reads the log sees that this version's own tests were not run.
  if (skip_tests && !checked->result.policy.tests.empty()) {
    request.message += request.message.empty() ? "[tests skipped: --skip-tests]" : " [tests skipped: --skip-tests]";
  }
  request.expect_version = expect;
  request.replace_signature = args.has("resign");
  // The signing key: --sign-key, else $GOV_SIGNING_KEY. Read before the store is touched.
  std::optional<std::string> key_path = args.value("sign-key");
  if (!key_path) {
    if (const char* env = std::getenv("GOV_SIGNING_KEY"); env && *env) key_path = env;
  }
  std::optional<signing::SecretKey> sign_key;
  if (key_path) {
    auto key = signing::load_secret_key(*key_path);
    if (!key.ok()) {
      fmt::print(stderr, "error: {}\n", key.error().message);
      return kUsage;
    }
    sign_key = std::move(key.value());
  }
  // A zero-byte file becomes a new store (docs/store.md); said, since it is also what a store
  // truncated by accident looks like, and the new history would be layered over the loss.
  const std::string path = db_path(args);
  const bool empty_file = is_empty_file(path);
  std::optional<store::Store> db = open_store(args, Access::create);
  if (!db) return kUsage;  // a store that cannot be opened: an I/O problem (docs/interfaces.md)
  if (empty_file) {
    fmt::print(stderr, "notice: `{}` was an empty file; a new store was made in it (if it held a store that was "
                       "truncated, restore it from a backup instead: docs/store.md, \"Backup and restore\")\n",
               display_path(path));
  }
  std::string warning;
  auto result = driver::apply_policy(*db, *checked, std::move(request), warning, sign_key ? &*sign_key : nullptr);
  if (!warning.empty()) fmt::print(stderr, "warning: {}\n", escape_for_terminal(warning));
  if (!result.ok()) {
    fmt::print(stderr, "error: {}\n", store_error_text(result.error()));
    return store_failure_status(result.error());
  }
  if (sign_key) {
    fmt::print(stderr, "signed version {} with key `{}`\n", result.value().version, sign_key->public_key().key_id());
  } else if (result.value().created) {
    fmt::print(stderr,
               "notice: version {} is not signed; controllers that require signatures will refuse it "
               "(gov keygen, --sign-key)\n",
               result.value().version);
  }
  if (result.value().created && result.value().version == 1 && !args.has("policy")) {
    note_new_policy_beside_others(*db, policy);
  }
  if (result.value().created) note_lint_warnings(*checked, args.positional[0]);
  if (result.value().created) {
    fmt::print("applied `{}` version {} ({})\n", escape_for_terminal(policy), result.value().version,
               result.value().content_sha256.substr(0, 12));
  } else {
    fmt::print("unchanged: `{}` is at version {} with the same content\n", escape_for_terminal(policy), result.value().version);
  }
  return kOk;
}

// ------------------------------------------------------------------ log, show, rollback


/// `gov log --format json`: one array on one line. Author and message are anyone's text: JSON
/// strings with every unsafe character escaped (support::JsonWriter).
std::string log_json(const std::vector<store::VersionInfo>& versions) {
  JsonWriter json(/*indented=*/false);
  json.begin_array();
  for (const store::VersionInfo& v : versions) {
    json.begin_object();
    json.field("version", v.number);
    json.key("parent");
    v.parent ? json.number(*v.parent) : json.null();
    json.key("restored_from");
    v.restored_from ? json.number(*v.restored_from) : json.null();
    json.field("sha256", v.content_sha256);
    json.field("author", v.author);
    json.field("message", v.message);
    json.field("created", time_text(v.created_ms));
    json.field("active", v.active);
    json.key("signed_by");  // the signature's key id, not verified here (gov show --verify-key does)
    v.signed_by.empty() ? json.null() : json.string(v.signed_by);
    json.end_object();
  }
  json.end_array();
  return json.finish();
}

int run_log(const Args& args) {
  if (!args.positional.empty()) {
    fmt::print(stderr, "error: gov log takes no arguments, found `{}` (usage: gov log [--policy NAME] [--limit N])\n",
               escape_for_terminal(args.positional[0]));
    return kUsage;
  }
  const std::string format = args.value("format").value_or("text");
  if (format != "text" && format != "json") {
    fmt::print(stderr, "error: unknown format `{}` (expected text or json)\n", escape_for_terminal(format));
    return kUsage;
  }
  size_t limit = 50;
  if (auto l = args.value("limit")) {
    const std::optional<int64_t> n = l->empty() || (*l)[0] == 'v' ? std::nullopt : version_argument(*l);
    if (!n || *n == 0) {
      fmt::print(stderr, "error: --limit takes a positive whole number, found `{}`\n", escape_for_terminal(*l));
      return kUsage;
    }
    limit = static_cast<size_t>(*n);
  }
  std::optional<store::Store> db = open_store(args, Access::read);
  if (!db) return kUsage;  // a store that cannot be opened: an I/O problem (docs/interfaces.md)
  std::optional<std::string> policy = policy_name(*db, args);
  if (!policy) return kFailed;
  auto versions = db->log(*policy, limit);
  if (!versions.ok()) {
    fmt::print(stderr, "error: {}\n", escape_for_terminal(versions.error().message));
    return kFailed;
  }
  if (format == "json") {
    fmt::print("{}", log_json(versions.value()));
    return kOk;
  }
  std::string out;
  for (const store::VersionInfo& v : versions.value()) {
    // A rollback's own words: its message, or "rollback to vN" (gov before 0.38 wrote the
    // message "rollback to version N" itself, which is not said twice).
    std::string message = v.message.empty() ? (v.restored_from ? "" : "(no message)") : escape_for_terminal(v.message);
    if (v.restored_from && v.message != fmt::format("rollback to version {}", *v.restored_from)) {
      message += fmt::format("{}rollback to v{}", message.empty() ? "" : " (", *v.restored_from);
      if (!v.message.empty()) message += ")";
    }
    const std::string signature = v.signed_by.empty() ? "unsigned" : "signed " + escape_for_terminal(v.signed_by);
    out += fmt::format("v{:<4} {}  {}  {:<12} {}  ({}){}\n", v.number, time_text(v.created_ms),
                       v.content_sha256.substr(0, 12), escape_for_terminal(v.author), message, signature,
                       v.active ? "  [active]" : "");
  }
  fmt::print("{}", out);
  return kOk;
}

int run_show(const Args& args) {
  if (args.positional.size() > 1) {
    fmt::print(stderr, "error: gov show takes one version at most, found `{}` after `{}` (usage: gov show [VERSION])\n",
               escape_for_terminal(args.positional[1]), escape_for_terminal(args.positional[0]));
    return kUsage;
  }
  std::optional<store::Store> db = open_store(args, Access::read);
  if (!db) return kUsage;  // a store that cannot be opened: an I/O problem (docs/interfaces.md)
  std::optional<std::string> policy = policy_name(*db, args);
  if (!policy) return kFailed;
  std::optional<int64_t> number;
  if (!args.positional.empty()) {
    number = version_argument(args.positional[0]);
    if (!number) {
      fmt::print(stderr, "error: `{}` is not a version number\n", escape_for_terminal(args.positional[0]));
      return kUsage;
    }
  }
  auto version = db->show(*policy, number);
  if (!version.ok()) {
    fmt::print(stderr, "error: {}\n", escape_for_terminal(version.error().message));
    return kFailed;
  }
  const store::Version& v = version.value();
  // Checked before anything is printed, whatever is shown: the files are what the content hash
  // (and a signature) vouch for, and `--source` is how an operator audits them.
  if (const std::string found = store::content_hash(v.files); found != v.info.content_sha256) {
    fmt::print(stderr,
               "error: version {}'s stored files do not match its recorded content hash (recorded {}, found {}): the "
               "store was changed outside gov; nothing is shown\n",
               v.info.number, v.info.content_sha256.substr(0, 12), found.substr(0, 12));
    return kFailed;
  }
  if (args.has("inspect") || args.has("source") || args.has("verify-key") || args.has("require-signature")) {
    std::optional<driver::VerifyOptions> verify = verify_options_from(args);
    if (!verify) return kUsage;
    if (!signature_accepted(*policy, v, *verify)) return kFailed;
  }
  if (args.has("source")) {
    for (const store::PolicyFile& f : v.files) fmt::print("# ==> {} <==\n{}", display_path(f.path), f.text);
    return kOk;
  }
  fmt::print("policy {} version {}{}\n  sha256  {}\n  author  {}\n  date    {}\n  message {}\n  signed  {}\n  files  ",
             escape_for_terminal(*policy), v.info.number, v.info.active ? " (active)" : "", v.info.content_sha256,
             escape_for_terminal(v.info.author), time_text(v.info.created_ms), escape_for_terminal(v.info.message),
             v.signature ? fmt::format("by key `{}`{}", escape_for_terminal(v.signature->key_id),
                                       args.has("verify-key") ? " (verified)" : " (not verified: give --verify-key)")
                         : std::string("no"));
  for (const store::PolicyFile& f : v.files) fmt::print(" {}", display_path(f.path));
  fmt::print("\n");
  if (args.has("inspect")) {
    driver::Result checked = driver::load(driver::Source::version(v), driver::Request::up_to(driver::Stage::check));
    if (!checked.ok()) {
      fmt::print(stderr, "error: {}\n", escape_for_terminal(checked.error->message));
      return kFailed;
    }
    fmt::print("\n{}", inspection_text(checked.policy->checked.result.policy));
  }
  return kOk;
}

int run_rollback(const Args& args) {
  if (args.positional.size() != 1) {
    fmt::print(stderr, "error: usage: gov rollback VERSION\n");
    return kUsage;
  }
  if (!version_argument(args.positional[0])) {
    fmt::print(stderr, "error: `{}` is not a version number (usage: gov rollback VERSION)\n",
               escape_for_terminal(args.positional[0]));
    return kUsage;
  }
  std::optional<store::Store> db = open_store(args, Access::write);
  if (!db) return kUsage;  // a store that cannot be opened: an I/O problem (docs/interfaces.md)
  std::optional<std::string> policy = policy_name(*db, args);
  if (!policy) return kFailed;
  store::RollbackRequest request;
  request.policy = *policy;
  request.version = *version_argument(args.positional[0]);
  request.author = author(args);
  request.message = args.value("message").value_or("");  // gov log says "rollback to vN" by itself
  if (auto e = args.value("expect-version")) {
    request.expect_version = version_argument(*e);
    if (!request.expect_version) {
      fmt::print(stderr, "error: --expect-version takes a version number, found `{}`\n", escape_for_terminal(*e));
      return kUsage;
    }
  }
  auto result = db->rollback(request);
  if (!result.ok()) {
    fmt::print(stderr, "error: {}\n", store_error_text(result.error()));
    return store_failure_status(result.error());
  }
  if (result.value().created) {
    fmt::print("rolled back `{}` to the content of version {}: now version {}\n", escape_for_terminal(request.policy), request.version,
               result.value().version);
    // As apply says it: controllers that require signatures will refuse the new version.
    if (auto made = db->show(request.policy, result.value().version); made.ok() && !made.value().signature) {
      fmt::print(stderr,
                 "notice: version {} is not signed, as version {}, whose content it restores, was not; controllers that "
                 "require signatures will refuse it (sign it with `gov apply FILE --sign-key KEY` of the same content)\n",
                 result.value().version, request.version);
    }
  } else {
    fmt::print("unchanged: version {} already has that content\n", result.value().version);
  }
  return kOk;
}

}  // namespace

namespace {

/// The policy `gov apply FILE` would write (named after the file, as apply names it), when the
/// store has it and --policy does not say otherwise: `gov diff FILE` plans that apply.
std::optional<std::string> applied_policy_of(store::Store& db, const Args& args, const std::string& file) {
  if (args.has("policy")) return std::nullopt;
  const std::string stem = fs::path(file).stem().string();
  auto policies = db.policies();
  if (!policies.ok()) return std::nullopt;
  for (const store::PolicyInfo& p : policies.value()) {
    if (p.name == stem) return stem;
  }
  return std::nullopt;
}

}  // namespace

int run_store_diff(const Args& args) {
  std::optional<store::Store> db = open_store(args, Access::read);
  if (!db) return kUsage;  // a store that cannot be opened: an I/O problem (docs/interfaces.md)
  // `gov diff FILE`: the active version against a working file (plan before apply).
  const bool file = args.positional.size() == 1 && !version_argument(args.positional[0]);
  std::optional<std::string> policy = file ? applied_policy_of(*db, args, args.positional[0]) : std::nullopt;
  if (!policy) policy = policy_name(*db, args);
  if (!policy) return kFailed;
  auto active = db->active(*policy);
  if (!active.ok()) {
    fmt::print(stderr, "error: {}\n", escape_for_terminal(active.error().message));
    return kFailed;
  }
  std::optional<int64_t> a, b;
  if (!file && args.positional.size() >= 1) a = version_argument(args.positional[0]);
  if (args.positional.size() >= 2) b = version_argument(args.positional[1]);
  if ((!file && args.positional.size() >= 1 && !a) || (args.positional.size() >= 2 && !b) || args.positional.size() > 2) {
    fmt::print(stderr,
               "error: usage: gov diff [A] [B] (version numbers; default: the active one and its parent), "
               "or gov diff FILE (the active version against FILE)\n");
    return kUsage;
  }
  if (!b) b = active.value().number;
  if (file) a = active.value().number;
  if (args.positional.empty() && !active.value().parent) {
    // The default pair is the active version and its parent: a first version has none.
    fmt::print("`{}` v{} has no earlier version to compare it with (give two versions, or a FILE)\n",
               escape_for_terminal(*policy), active.value().number);
    return kOk;
  }
  if (!a) a = args.positional.empty() ? *active.value().parent : active.value().number;
  if (args.has("state") && *a != active.value().number) {
    fmt::print(stderr, "error: --state needs the old side to be the active version ({}), not version {}\n",
               active.value().number, *a);
    return kUsage;
  }
  std::optional<driver::VerifyOptions> verify = verify_options_from(args);
  if (!verify) return kUsage;
  const driver::Request request = driver::Request::up_to(driver::Stage::check);
  auto load_version = [&](int64_t number) -> std::unique_ptr<driver::Policy> {
    auto version = db->show(*policy, number);
    if (!version.ok()) {
      fmt::print(stderr, "error: {}\n", escape_for_terminal(version.error().message));
      return nullptr;
    }
    if (!signature_accepted(*policy, version.value(), *verify)) return nullptr;
    driver::Result loaded = driver::load(driver::Source::version(version.value()), request);
    if (!loaded.ok()) {
      fmt::print(stderr, "error: {}\n", escape_for_terminal(loaded.error->message));
      return nullptr;
    }
    return std::move(loaded.policy);
  };
  std::unique_ptr<driver::Policy> old_policy = load_version(*a);
  if (!old_policy) return kFailed;
  std::unique_ptr<driver::Policy> new_policy;
  std::string b_name = fmt::format("{} v{}", *policy, *b);
  int status = kOk;
  if (file) {
    new_policy = load_file_for_diff(args.positional[0], root_option(args), status);
    if (!new_policy) return status;
    b_name = args.positional[0];
  } else {
    new_policy = load_version(*b);
    if (!new_policy) return kFailed;
  }
  std::optional<diff::HeldAmounts> held;
  if (args.has("state")) {
    held = held_in_state(args, std::nullopt, status);
    if (!held) return status;
  }
  return print_diff(args, old_policy->checked.result.policy, new_policy->checked.result.policy,
                    fmt::format("{} v{}", *policy, *a), b_name, held ? &*held : nullptr);
}

Command apply_command() {
  std::vector<OptionSpec> options = store_options();
  options.push_back({"message", "MESSAGE", "why (also -m)"});
  options.push_back({"author", "NAME", "who (default $GOV_AUTHOR, else the OS user)"});
  options.push_back({"expect-version", "N", "fail with a conflict unless N is the active version (0: none yet)"});
  options.push_back({"sign-key", "FILE", "sign the version and its native code with this Ed25519 secret key "
                                         "(`gov keygen`; default $GOV_SIGNING_KEY)"});
  options.push_back(root_option_spec());
  options.push_back({"skip-tests", "", "apply although the policy's own `test` blocks fail (said in the version's message)"});
  options.push_back({"resign", "", "with --sign-key, replace the active version's signature by another key when the content is unchanged (refused without it)"});
  return {{"apply", "gov apply FILE [-m MESSAGE] [--expect-version N] [--sign-key FILE [--resign]] [--skip-tests] [--db PATH]",
           "Check and compile a policy and store it as the new active version.",
           "The policy's own `test` blocks run first (with the reference interpreter); a failing one stops the\n"
           "apply unless --skip-tests is given, which the version's message then records.\n"
           "Every file that goes into the policy (imports included) is stored, so a version can be rebuilt byte for\n"
           "byte; the compiled native code is cached with it. Nothing new is stored when the content is unchanged.\n"
           "With a signing key the version and its native code are signed: controllers run cached native code\n"
           "only when it is signed by the key they verify with (docs/store.md, \"Signed versions\").",
           options},
          run_apply};
}

Command log_command() {
  std::vector<OptionSpec> options = store_options();
  options.push_back({"format", "FORMAT", "text (default) or json"});
  options.push_back({"limit", "N", "at most N versions (default 50)"});
  return {{"log", "gov log [--format text|json] [--limit N] [--db PATH]", "List a policy's versions, newest first.", "",
           options},
          run_log};
}

Command show_command() {
  std::vector<OptionSpec> options = store_options();
  options.push_back({"source", "", "print the stored source files"});
  options.push_back({"inspect", "", "print the version's resolved policy (as `gov inspect`)"});
  for (OptionSpec& o : verify_options()) options.push_back(std::move(o));
  return {{"show", "gov show [VERSION] [--source|--inspect [--verify-key FILE] [--require-signature]] [--db PATH]",
           "Show a stored version (default: the active one).",
           "", options},
          run_show};
}

Command rollback_command() {
  std::vector<OptionSpec> options = store_options();
  options.push_back({"message", "MESSAGE", "why (also -m)"});
  options.push_back({"author", "NAME", "who"});
  options.push_back({"expect-version", "N", "fail with a conflict unless N is the active version"});
  return {{"rollback", "gov rollback VERSION [-m MESSAGE] [--expect-version N] [--db PATH]",
           "Make an old version's content active again, as a new version.", "", options},
          run_rollback};
}

// ------------------------------------------------------------------ store copy

namespace {

int run_store(const Args& args) {
  if (args.positional.size() != 1 || args.positional[0] != "copy" || !args.value("from") || !args.value("to")) {
    fmt::print(stderr, "usage: gov store copy --from sqlite:FILE|postgresql://... --to sqlite:FILE|postgresql://...\n");
    return 2;
  }
  const std::string from_location = *args.value("from");
  const std::string to_location = *args.value("to");
  store::OpenOptions from_options;
  from_options.create = false;
  from_options.read_only = true;
  auto from = store::Store::open(from_location, from_options);
  if (!from.ok()) {
    fmt::print(stderr, "error: store `{}`: {}\n", display_path(store::display_location(from_location)),
               escape_for_terminal(from.error().message));
    return 2;
  }
  store::OpenOptions to_options;
  to_options.create_directories = false;
  // An SQLite destination this copy creates is removed again when the copy is refused: an empty
  // store left behind reads as a valid, empty backup (an SRE helper's finding).
  const bool sqlite_to = !store::is_postgres_url(to_location);
  const std::string to_file = to_location.starts_with("sqlite:") ? to_location.substr(7) : to_location;
  std::error_code exists_error;
  const bool created_here = sqlite_to && !fs::exists(to_file, exists_error) && !exists_error;
  auto to = store::Store::open(to_location, to_options);
  if (!to.ok()) {
    fmt::print(stderr, "error: store `{}`: {}\n", display_path(store::display_location(to_location)),
               escape_for_terminal(to.error().message));
    return 2;
  }
  auto copied = store::copy_history(from.value(), to.value());
  if (!copied.ok()) {
    fmt::print(stderr, "error: {}\n", store_error_text(copied.error()));
    if (created_here) {
      { store::Store closing = std::move(to.value()); }  // closed before its files go
      std::error_code ignored;
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(to_file + suffix, ignored);
    }
    return store_failure_status(copied.error());
  }
  const store::CopyResult& done = copied.value();
  fmt::print("copied {} version{} and {} audit entr{} of {} polic{} from {} to {}{}; every version verified by its content "
             "hash\n",
             done.versions, done.versions == 1 ? "" : "s", done.audit_entries, done.audit_entries == 1 ? "y" : "ies",
             done.policies, done.policies == 1 ? "y" : "ies", display_path(from.value().path()),
             display_path(to.value().path()),
             done.kept_versions > 0 ? fmt::format(" ({} already there)", done.kept_versions) : "");
  return 0;
}

}  // namespace

Command store_command() {
  std::vector<OptionSpec> options;
  options.push_back({"from", "STORE", "the store to copy: sqlite:FILE (or a file path) or a postgresql:// URL"});
  options.push_back({"to", "STORE", "the store to copy into: empty, or holding a prefix of the source's history"});
  return {{"store", "gov store copy --from STORE --to STORE",
           "Copy a store's whole history between SQLite and PostgreSQL.",
           "Every policy, version (numbers, authors, messages and times kept), file, cached object, signature and\n"
           "audit entry, and each policy's active version, in one transaction of the destination. Each version is\n"
           "hashed before it is written and read back and compared by content hash afterwards. The destination\n"
           "must be empty or hold a prefix of the source's history (an earlier copy): then only the rest is copied;\n"
           "anything else is refused and nothing is written (docs/store.md, \"Copying a history\").",
           options},
          run_store};
}

}  // namespace gov::cli
