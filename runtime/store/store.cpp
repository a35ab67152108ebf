// The store's public face: what every back end shares (hashes, paths, request checks,
// messages), the choice of back end by location, and the copy of a history between stores.
#include "runtime/store/store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "compiler/support/sha256.hpp"
#include "runtime/store/backend.hpp"

namespace gov::store {

namespace detail {

int64_t now_ms() {
  auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count();
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

int64_t clamp_limit(size_t limit) {
  constexpr auto kMax = static_cast<size_t>(std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(std::min(limit, kMax));
}

Error in_context(std::string_view doing, Error error) {
  switch (error.kind) {
    case ErrorKind::conflict:
    case ErrorKind::not_found:
    case ErrorKind::invalid:
    case ErrorKind::policy:  // not the store's kinds: complete as they are
    case ErrorKind::store:
    case ErrorKind::signature:
    case ErrorKind::invalid_module:
    case ErrorKind::stale_object:
    case ErrorKind::corrupt_object:
    case ErrorKind::llvm:
      return error;
    case ErrorKind::busy:  // the back end stated the wait
    case ErrorKind::io:
    case ErrorKind::corrupt:
    case ErrorKind::newer_schema:
    case ErrorKind::read_only:
    case ErrorKind::full:
      break;
  }
  error.message = fmt::format("cannot {}: {}", doing, error.message);
  return error;
}

Error no_policy(std::string_view policy) {
  return Error{ErrorKind::not_found, fmt::format("no policy `{}` in the store", policy)};
}

Result<void> check_written(std::string_view doing, const std::vector<PolicyFile>& files, const std::string& content_sha256) {
  const std::string found = content_hash(files);
  if (found == content_sha256) return {};
  return Error{ErrorKind::corrupt,
               fmt::format("{}: the stored files do not read back to the content hash {} (found {}): the store's source "
                           "rows were changed outside gov or are damaged; nothing was changed (`gov apply` of the policy's "
                           "files writes them again)",
                           doing, content_sha256.substr(0, 12), found.substr(0, 12))};
}

Result<void> validate(const ApplyRequest& request) {
  auto invalid = [](std::string message) { return Error{ErrorKind::invalid, std::move(message)}; };
  if (request.policy.empty()) return invalid("the policy name is empty");
  if (request.policy.size() > kMaxPolicyNameBytes) {
    return invalid(fmt::format("the policy name is {} bytes long; a store keeps names of at most {}", request.policy.size(),
                               kMaxPolicyNameBytes));
  }
  if (request.files.empty()) return invalid(fmt::format("no files for policy `{}`", request.policy));
  if (request.files.size() > kMaxFilesPerVersion) {
    return invalid(fmt::format("{} files for policy `{}`; a version has at most {}", request.files.size(),
                               request.policy, kMaxFilesPerVersion));
  }
  std::set<std::string_view> paths;
  for (const PolicyFile& file : request.files) {
    if (auto problem = file_path_problem(file.path)) return invalid(*problem);
    if (!paths.insert(file.path).second) return invalid(fmt::format("file `{}` is given twice", file.path));
  }
  if (!request.content_sha256.empty() && !is_sha256_hex(request.content_sha256)) {
    return invalid(fmt::format("content hash `{}` is not 64 lower-case hex digits", request.content_sha256));
  }
  if (request.object && request.object->key.empty()) return invalid("the object key is empty");
  for (const auto* signature : {&request.signature, request.object ? &request.object->signature : nullptr}) {
    if (signature && *signature && (*signature)->key_id.empty()) return invalid("a signature has no key id");
  }
  return {};
}

Result<void> check_expected(std::string_view policy, std::optional<int64_t> expected,
                            std::optional<int64_t> active) {
  int64_t current = active.value_or(0);
  if (!expected || *expected == current) return {};
  std::string now = active ? fmt::format("is at version {}", current) : "has no version";
  std::string wanted = *expected == 0 ? "no version" : fmt::format("version {}", *expected);
  return Error{ErrorKind::conflict, fmt::format("policy `{}` {}, expected {}", policy, now, wanted)};
}

Result<void> check_resign(std::string_view policy, int64_t number, const std::optional<std::string>& stored_key,
                          const std::string& signing_key, bool replace) {
  if (!stored_key || *stored_key == signing_key || replace) return {};
  return Error{ErrorKind::conflict,
               fmt::format("version {} of `{}` has this content and is signed by key `{}`; signing it with key `{}` "
                           "would replace that signature, and controllers that verify with `{}` would refuse the "
                           "version (give --resign to replace it)",
                           number, policy, *stored_key, signing_key, *stored_key)};
}

Result<void> check_read_file(const PolicyFile& file, size_t files_before) {
  // Rows may have been written by anything that can open the store: check them as apply does.
  if (files_before == kMaxFilesPerVersion) {
    return Error{ErrorKind::corrupt, fmt::format("a stored version has more than {} files", kMaxFilesPerVersion)};
  }
  if (auto problem = file_path_problem(file.path)) {
    return Error{ErrorKind::corrupt, fmt::format("a stored version has an invalid file: {}", *problem)};
  }
  return {};
}

std::optional<AuditAction> parse_action(std::string_view name) {
  for (AuditAction action : {AuditAction::apply, AuditAction::rollback, AuditAction::activate}) {
    if (audit_action_name(action) == name) return action;
  }
  return std::nullopt;
}

}  // namespace detail

namespace {

void append_length(std::string& out, uint64_t length) {
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((length >> shift) & 0xff);
}

}  // namespace

std::string_view audit_action_name(AuditAction action) {
  switch (action) {
    case AuditAction::apply: return "apply";
    case AuditAction::rollback: return "rollback";
    case AuditAction::activate: return "activate";
  }
  return "unknown";
}

std::string default_path() {
  const char* from_environment = std::getenv("GOV_DB");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  return std::string(kBuiltInPath);
}

std::optional<std::string> file_path_problem(std::string_view path) {
  const auto problem = [&](std::string_view what) {
    return std::optional<std::string>(fmt::format("file path {:?} {}", path.substr(0, 200), what));
  };
  if (path.empty()) return problem("is empty");
  if (path.size() > kMaxFilePathBytes) return problem(fmt::format("is longer than {} bytes", kMaxFilePathBytes));
  if (path.front() == '/') return problem("is absolute (stored paths are relative to the policy root)");
  for (const char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return problem("contains a control character");
    if (c == '\\') return problem("contains a backslash");
  }
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(begin, end - begin);
    if (part.empty()) return problem("has an empty component");
    if (part == "." || part == "..") return problem(fmt::format("has a `{}` component", part));
    begin = end + 1;
  }
  return std::nullopt;
}

std::string content_hash(const std::vector<PolicyFile>& files) {
  Sha256 hash;
  hash.update("gov-content-v1\n");
  std::string length;
  for (const PolicyFile& file : files) {
    for (std::string_view part : {std::string_view(file.path), std::string_view(file.text)}) {
      length.clear();
      append_length(length, part.size());
      hash.update(length);
      hash.update(part);
    }
  }
  return to_hex(hash.finish());
}


bool is_postgres_url(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

namespace {
/// Whether a URL query parameter named `encoded` (percent-escapes as written) is a password:
/// `password`, `sslpassword`, in any case, however escaped.
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_password_parameter(std::string_view encoded) {
  const auto hex = hex_digit;
  std::string name;
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] == '%' && i + 2 < encoded.size() && hex(encoded[i + 1]) >= 0 && hex(encoded[i + 2]) >= 0) {
      name += static_cast<char>(hex(encoded[i + 1]) * 16 + hex(encoded[i + 2]));
      i += 2;
    } else {
      name += encoded[i];
    }
  }
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.ends_with("password");
}
}  // namespace

std::string display_location(std::string_view location) {
  if (!is_postgres_url(location)) return std::string(location);
  std::string shown(location);
  // postgresql://user:password@host/...: the password is between the first ':' after the
  // scheme and the last '@' of the authority.
  const size_t authority = shown.find("://") + 3;
  const size_t authority_end = std::min(shown.find_first_of("/?", authority), shown.size());
  const size_t at = shown.rfind('@', authority_end);
  if (at != std::string::npos && at > authority) {
    const size_t colon = shown.find(':', authority);
    if (colon != std::string::npos && colon < at) shown.replace(colon + 1, at - colon - 1, "***");
  }
  // ...?password=secret&sslpassword=...: every parameter whose name, as libpq decodes it
  // (percent-escapes, `pass%77ord`), ends in `password`.
  for (size_t from = shown.find('?'); from != std::string::npos && from < shown.size();) {
    const size_t name = from + 1;
    const size_t end = std::min(shown.find('&', name), shown.size());
    const size_t equals = shown.find('=', name);
    if (equals != std::string::npos && equals < end && is_password_parameter(std::string_view(shown).substr(name, equals - name))) {
      shown.replace(equals + 1, end - equals - 1, "***");
      from = shown.find('&', name);
    } else {
      from = end < shown.size() ? end : std::string::npos;
    }
  }
  return shown;
}

// ---- Store: forwards to its back end -------------------------------------------------------

Result<Store> Store::open(const std::string& path, const OpenOptions& options) {
  std::string location = path;
  if (location.starts_with("sqlite:")) location.erase(0, 7);
  auto impl = is_postgres_url(location) ? detail::open_postgres(location, options)
                                        : detail::open_sqlite(location, options);
  if (!impl) return impl.error();
  return Store(std::move(*impl));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

const std::string& Store::path() const { return impl_->path(); }
bool Store::read_only() const { return impl_->read_only(); }
Backend Store::backend() const { return impl_->backend(); }
std::optional<std::string> Store::replaced() const { return impl_->replaced(); }

Result<ApplyResult> Store::apply(const ApplyRequest& request) {
  auto valid = detail::validate(request);
  if (!valid) return valid.error();
  std::string hash = request.content_sha256.empty() ? content_hash(request.files) : request.content_sha256;
  return impl_->apply(request, hash);
}

Result<ApplyResult> Store::rollback(const RollbackRequest& request) { return impl_->rollback(request); }

Result<ApplyResult> Store::activate(std::string_view policy, int64_t version, std::string_view author,
                                    std::optional<int64_t> expect_version) {
  return impl_->activate(policy, version, author, expect_version);
}

Result<std::vector<VersionInfo>> Store::log(std::string_view policy, size_t limit, std::optional<int64_t> before) {
  return impl_->log(policy, limit, before);
}

Result<Version> Store::show(std::string_view policy, std::optional<int64_t> number) {
  return impl_->show(policy, number);
}

Result<VersionInfo> Store::active(std::string_view policy) { return impl_->active(policy); }

Result<void> Store::put_object(std::string_view policy, int64_t version, const CompiledObject& object) {
  return impl_->put_object(policy, version, object);
}

Result<std::optional<Bytes>> Store::get_object(std::string_view policy, int64_t version, std::string_view key) {
  auto object = impl_->get_signed_object(policy, version, key);
  if (!object) return object.error();
  if (!*object) return std::optional<Bytes>();
  return std::optional<Bytes>(std::move((*object)->bytes));
}

Result<std::optional<SignedObject>> Store::get_signed_object(std::string_view policy, int64_t version,
                                                            std::string_view key) {
  return impl_->get_signed_object(policy, version, key);
}

Result<std::vector<CompiledObject>> Store::objects(std::string_view policy, int64_t version) {
  return impl_->objects(policy, version);
}

Result<std::vector<AuditEntry>> Store::audit(std::string_view policy, size_t limit, std::optional<int64_t> before) {
  return impl_->audit(policy, limit, before);
}

Result<std::vector<PolicyInfo>> Store::policies() { return impl_->policies(); }

Result<void> Store::batch(const std::function<Result<void>(Store&)>& body) { return impl_->batch(*this, body); }

Result<void> Store::import_version(std::string_view policy, const ImportedVersion& version) {
  const std::string doing = fmt::format("copy version {} of policy `{}` to `{}`", version.version.info.number,
                                        policy, path());
  if (policy.empty()) return Error{ErrorKind::invalid, "the policy name is empty"};
  ApplyRequest as_apply;  // the same checks as an apply of these files
  as_apply.policy = std::string(policy);
  as_apply.files = version.version.files;
  as_apply.content_sha256 = version.version.info.content_sha256;
  auto valid = detail::validate(as_apply);
  if (!valid) return detail::in_context(doing, valid.error());
  if (const std::string found = content_hash(version.version.files); found != version.version.info.content_sha256) {
    return Error{ErrorKind::invalid,
                 fmt::format("version {} of policy `{}`: its files do not match its content hash (recorded {}, found {})",
                             version.version.info.number, policy, version.version.info.content_sha256, found)};
  }
  for (const CompiledObject& object : version.objects) {
    if (object.key.empty()) return Error{ErrorKind::invalid, "the object key is empty"};
  }
  return impl_->import_version(policy, version);
}

Result<void> Store::import_audit(const AuditEntry& entry) { return impl_->import_audit(entry); }

Result<void> Store::import_active(std::string_view policy, std::optional<int64_t> version) {
  return impl_->import_active(policy, version);
}

Result<std::unique_ptr<ChangeFeed>> Store::changes(std::string_view policy) { return impl_->changes(policy); }

Result<std::string> Store::integrity_check() { return impl_->integrity_check(); }

WorkCounters Store::take_work_counters() { return impl_->take_work_counters(); }

// ---- copy_history ---------------------------------------------------------------------------

namespace {

// Every version of `policy` in `store`, oldest first.
Result<std::vector<VersionInfo>> whole_log(Store& store, std::string_view policy) {
  auto versions = store.log(policy, std::numeric_limits<size_t>::max());
  if (!versions) return versions.error();
  std::reverse(versions->begin(), versions->end());
  return versions;
}

// Every audit entry of `store`, oldest first.
Result<std::vector<AuditEntry>> whole_audit(Store& store) {
  auto entries = store.audit("", std::numeric_limits<size_t>::max());
  if (!entries) return entries.error();
  std::reverse(entries->begin(), entries->end());
  return entries;
}

bool same_entry(const AuditEntry& a, const AuditEntry& b) {
  return a.at_ms == b.at_ms && a.action == b.action && a.policy == b.policy && a.version == b.version &&
         a.previous == b.previous && a.author == b.author && a.message == b.message;
}

std::map<std::string, std::string> object_digests(const std::vector<CompiledObject>& objects) {
  std::map<std::string, std::string> digests;
  for (const CompiledObject& object : objects) {
    std::string signature = object.signature ? object.signature->key_id + ":" +
                                                   sha256_hex(std::string_view(reinterpret_cast<const char*>(
                                                                                   object.signature->bytes.data()),
                                                                               object.signature->bytes.size()))
                                             : "";
    digests[object.key] =
        sha256_hex(std::string_view(reinterpret_cast<const char*>(object.bytes.data()), object.bytes.size())) + signature;
  }
  return digests;
}

Error refused(std::string message) { return Error{ErrorKind::conflict, std::move(message)}; }

Result<CopyResult> copy_into(Store& from, Store& to) {
  CopyResult result;
  auto source_policies = from.policies();
  if (!source_policies) return source_policies.error();
  auto target_policies = to.policies();
  if (!target_policies) return target_policies.error();
  result.policies = static_cast<int64_t>(source_policies->size());
  std::map<std::string, int64_t> kept;  // policy -> versions the destination has already
  for (const PolicyInfo& target : *target_policies) {
    auto in_source = std::find_if(source_policies->begin(), source_policies->end(),
                                  [&](const PolicyInfo& p) { return p.name == target.name; });
    if (in_source == source_policies->end()) {
      return refused(fmt::format("the destination has policy `{}`, which the source does not have", target.name));
    }
    auto theirs = whole_log(to, target.name);
    if (!theirs) return theirs.error();
    auto ours = whole_log(from, target.name);
    if (!ours) return ours.error();
    if (theirs->size() > ours->size()) {
      return refused(fmt::format("the destination has {} versions of policy `{}`, the source only {}",
                                 theirs->size(), target.name, ours->size()));
    }
    for (size_t i = 0; i < theirs->size(); ++i) {
      const VersionInfo& a = (*theirs)[i];
      const VersionInfo& b = (*ours)[i];
      if (a.number != b.number || a.content_sha256 != b.content_sha256) {
        return refused(fmt::format(
            "the destination's version {} of policy `{}` (content {}) is not the source's version {} (content {}): "
            "the destination is not a prefix of the source",
            a.number, target.name, a.content_sha256.substr(0, 12), b.number, b.content_sha256.substr(0, 12)));
      }
    }
    kept[target.name] = static_cast<int64_t>(theirs->size());
    result.kept_versions += static_cast<int64_t>(theirs->size());
  }
  auto source_audit = whole_audit(from);
  if (!source_audit) return source_audit.error();
  auto target_audit = whole_audit(to);
  if (!target_audit) return target_audit.error();
  if (target_audit->size() > source_audit->size()) {
    return refused(fmt::format("the destination has {} audit entries, the source only {}", target_audit->size(),
                               source_audit->size()));
  }
  for (size_t i = 0; i < target_audit->size(); ++i) {
    if (!same_entry((*target_audit)[i], (*source_audit)[i])) {
      return refused(fmt::format("the destination's audit entry {} ({} of policy `{}` version {}) is not the source's: "
                                 "the destination is not a prefix of the source",
                                 i + 1, audit_action_name((*target_audit)[i].action), (*target_audit)[i].policy,
                                 (*target_audit)[i].version));
    }
  }
  for (const PolicyInfo& policy : *source_policies) {
    auto versions = whole_log(from, policy.name);
    if (!versions) return versions.error();
    for (size_t i = static_cast<size_t>(kept[policy.name]); i < versions->size(); ++i) {
      const int64_t number = (*versions)[i].number;
      auto version = from.show(policy.name, number);
      if (!version) return version.error();
      if (const std::string found = content_hash(version->files); found != version->info.content_sha256) {
        return Error{ErrorKind::corrupt,
                     fmt::format("the source's version {} of policy `{}` does not match its recorded content hash "
                                 "(recorded {}, found {}); it is not copied",
                                 number, policy.name, version->info.content_sha256, found)};
      }
      auto objects = from.objects(policy.name, number);
      if (!objects) return objects.error();
      ImportedVersion imported{std::move(*version), std::move(*objects)};
      auto written = to.import_version(policy.name, imported);
      if (!written) return written.error();
      // Read back from the destination (inside its transaction) and compare.
      auto back = to.show(policy.name, number);
      if (!back) return back.error();
      auto back_objects = to.objects(policy.name, number);
      if (!back_objects) return back_objects.error();
      if (content_hash(back->files) != imported.version.info.content_sha256 ||
          back->info.content_sha256 != imported.version.info.content_sha256 ||
          back->signature != imported.version.signature ||
          object_digests(*back_objects) != object_digests(imported.objects)) {
        return Error{ErrorKind::corrupt, fmt::format("version {} of policy `{}` read back from the destination differs "
                                                     "from the source's",
                                                     number, policy.name)};
      }
      ++result.versions;
    }
    auto activated = to.import_active(policy.name, policy.active);
    if (!activated) return activated.error();
  }
  for (size_t i = target_audit->size(); i < source_audit->size(); ++i) {
    auto appended = to.import_audit((*source_audit)[i]);
    if (!appended) return appended.error();
    ++result.audit_entries;
  }
  return result;
}

}  // namespace

Result<CopyResult> copy_history(Store& from, Store& to) {
  if (to.read_only()) {
    return Error{ErrorKind::read_only, fmt::format("cannot copy into `{}`: the store is read-only", to.path())};
  }
  CopyResult result;
  auto copied = to.batch([&](Store& target) -> Result<void> {
    auto done = copy_into(from, target);
    if (!done) return done.error();
    result = *done;
    return {};
  });
  if (!copied) return copied.error();
  return result;
}

}  // namespace gov::store
