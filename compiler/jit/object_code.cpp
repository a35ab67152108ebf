// Keys and the serialised form of ObjectCode: canonical bytes, SHA-256, bounds-checked parsing.
#include <llvm/Config/llvm-config.h>

#include <cstddef>
#include <cstring>
#include <string_view>

#include "compiler/ir/rule_index.hpp"
#include "compiler/jit/object_key.hpp"
#include "compiler/support/sha256.hpp"

namespace gov::jit {
namespace {

/// Bumped whenever lowering changes the code it generates for the same module.
/// 8: quota cells only where a team declares a quota, found through per-team lists (7 and
/// before carried a slot for every team × instance type of the catalog); or, on another branch,
/// the rule index. 9: both. 10: an indexed rule list out of line, the IR pipeline at O1. 11: level 1
/// is gov's own pass pipeline (codegen.cpp). 12: a team's usage is read at its quota cell's slot
/// (ir::UsageView), not at team × flavor_count + flavor. 13: a run of eight or more consecutive
/// rules is concluded through a mask of its verdicts. 14: gov_messages unoptimised; the machine
/// scheduler, loop strength reduction and the x86 cmov converter off (target.cpp). 15: gov_decide
/// takes no verdicts buffer (an object of 14 would write through its result pointer's slot).
constexpr uint32_t kCodegenVersion = 15;
constexpr uint32_t kFormatVersion = 1;
constexpr std::string_view kMagic = "GOVJITOB";

/// Appends integers little-endian and strings length-prefixed: one canonical encoding.
class ByteWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u32(uint32_t v) { little_endian(v, 4); }
  void u64(uint64_t v) { little_endian(v, 8); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void text(std::string_view s) {
    u64(s.size());
    raw({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  }
  void raw(std::span<const uint8_t> data) { bytes_.insert(bytes_.end(), data.begin(), data.end()); }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void little_endian(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

/// Reads what ByteWriter wrote; every read past the end fails (and keeps failing).
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}
  bool ok() const { return ok_; }
  size_t offset() const { return offset_; }
  uint64_t little_endian(size_t width) {
    const std::span<const uint8_t> bytes = raw(width);
    uint64_t v = 0;
    for (size_t i = 0; i < bytes.size(); ++i) v |= uint64_t{bytes[i]} << (8 * i);
    return v;
  }
  std::span<const uint8_t> raw(uint64_t size) {
    ok_ = ok_ && size <= data_.size() - offset_;
    if (!ok_) return {};
    offset_ += static_cast<size_t>(size);
    return data_.subspan(offset_ - static_cast<size_t>(size), static_cast<size_t>(size));
  }

 private:
  std::span<const uint8_t> data_;
  size_t offset_ = 0;
  bool ok_ = true;
};

Key sha256(std::span<const uint8_t> data) {
  Sha256 hash;
  hash.update({reinterpret_cast<const char*>(data.data()), data.size()});
  return hash.finish();
}

/// Which rules the code evaluates for which key values (ir::usable_rule_index; none: all).
void write_rule_index(ByteWriter& out, const ir::Module& module) {
  const auto list = [&out](const std::vector<uint32_t>& rules) {
    out.u64(rules.size());
    for (uint32_t rule : rules) out.u32(rule);
  };
  const ir::RuleIndex* usable = ir::usable_rule_index(module);
  out.u8(usable != nullptr ? 1 : 0);
  if (usable == nullptr) return;
  const ir::RuleIndex& index = *usable;
  list(index.always);
  list(index.never);
  out.u64(index.dimensions.size());
  for (const ir::RuleDimension& dimension : index.dimensions) {
    out.u8(static_cast<uint8_t>(dimension.key.source));
    out.i64(dimension.key.index);
    out.u64(dimension.buckets.size());
    for (const ir::RuleBucket& bucket : dimension.buckets) {
      out.i64(bucket.value);
      list(bucket.rules);
    }
  }
}

void write_rules(ByteWriter& out, const ir::Module& module) {
  out.u64(module.rules.size());
  for (const ir::Rule& rule : module.rules) {
    out.u32(rule.condition_length);
    out.u64(rule.code.size());
    for (size_t i = 0; i < rule.code.size(); ++i) {
      const ir::Instr& in = rule.code[i];
      out.u8(static_cast<uint8_t>(in.op));
      out.u8(static_cast<uint8_t>(in.type));
      out.u32(static_cast<uint32_t>(in.a));
      out.u32(static_cast<uint32_t>(in.b));
      out.i64(in.imm);
    }
  }
  out.u64(module.sets.size());
  for (const std::vector<int64_t>& set : module.sets) {
    out.u64(set.size());
    for (int64_t v : set) out.i64(v);
  }
  out.u64(module.label_keys.size());
  write_rule_index(out, module);
}

/// Which register each value part of each rule's message shows, and where (the text is not
/// code).
void write_messages(ByteWriter& out, const ir::Module& module) {
  for (const ir::Rule& rule : module.rules) {
    for (size_t p = 0; p < rule.message.size(); ++p) {
      if (rule.message[p].kind != ir::MessagePart::Kind::value) continue;
      out.u64(p);
      out.u32(static_cast<uint32_t>(rule.message[p].reg));
    }
    out.u64(~uint64_t{0});  // end of the rule's values
  }
}

// The five resources: the generated code folds in no partition column (the engine checks those
// with the reference formulas), so two modules that differ only there share an object, and keys
// of policies without partitions are what they were before partitions existed.
void write_resources(ByteWriter& out, const ir::Resources& amounts) {
  for (size_t i = 0; i < ir::kResourceCount; ++i) out.i64(amounts[i]);
}

/// What the fit test, the priority and the may-preempt predicate fold in as constants.
void write_decisions(ByteWriter& out, const ir::Module& module) {
  // The declared cells only, as the generated code carries them (a team's cells in declared
  // order, each with its instance type): the key's work grows with the quotas, not with teams ×
  // the catalog's types, and loading a cached object stays fast (docs/benchmarks.md: 2 ms).
  const ir::DeclaredQuotas table = ir::declared_quotas(module);
  out.u64(table.team_count);
  out.u64(table.flavor_count);
  for (size_t t = 0; t < table.team_count; ++t) {
    out.u64(table.team_first[t + 1] - table.team_first[t]);
    for (uint32_t k = table.team_first[t]; k < table.team_first[t + 1]; ++k) {
      const ir::QuotaCell& cell = table.cells[k];
      out.u32(table.flavors[k]);
      write_resources(out, cell.nominal);
      write_resources(out, cell.borrowing_limit);
      write_resources(out, cell.lendable);
      write_resources(out, cell.local);
    }
  }
  for (const ir::Resources& quota : table.cohort_quota) write_resources(out, quota);
  out.u8(module.settings.rank_by_priority ? 1 : 0);
  out.u32(static_cast<uint32_t>(module.settings.default_class));
  out.u64(module.classes.size());
  for (const ir::PriorityClass& c : module.classes) out.u32(static_cast<uint32_t>(c.weight));
  for (const ir::Team& team : module.teams) {
    out.u8(static_cast<uint8_t>(ir::within_team_policy(team)));
    out.u8(static_cast<uint8_t>(ir::reclaim_policy(team)));
    // gov_decide: whether and how a team's instance types are tried (their order is above).
    out.u8(team.active ? 1 : 0);
    out.u8(static_cast<uint8_t>(team.when_can_borrow));
    out.u8(static_cast<uint8_t>(team.flavor_preference));
  }
  for (const ir::Flavor& flavor : module.flavors) {  // gov_decide: cluster figures
    out.i64(flavor.capacity);
    write_resources(out, flavor.per_instance);
  }
}

void write_layout(ByteWriter& out) {
  out.u64(sizeof(ir::RuleInput));
  out.u64(offsetof(ir::RuleInput, team));
  out.u64(offsetof(ir::RuleInput, cluster));
  out.u64(offsetof(ir::RuleInput, labels));
  out.i64(ir::kAbsentLabel);
}

}  // namespace

Key compute_key(const ir::Module& module, const MachineDescription& machine,
                const Options& options) {
  ByteWriter out;
  out.text("gov-jit-key");
  out.u32(kCodegenVersion);
  out.text(LLVM_VERSION_STRING);
  out.text(machine.triple);
  out.text(machine.cpu);
  out.text(machine.features);
  out.u32(opt_level(options));
  out.u8(options.host_cpu ? 1 : 0);
  out.text("pic,small");  // relocation and code model (target.cpp)
  write_layout(out);
  write_rules(out, module);
  write_messages(out, module);
  write_decisions(out, module);
  return sha256(out.bytes());
}

std::string to_hex(const Key& key) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : key) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

std::vector<uint8_t> ObjectCode::serialize() const {
  ByteWriter out;
  out.raw({reinterpret_cast<const uint8_t*>(kMagic.data()), kMagic.size()});
  out.u32(kFormatVersion);
  out.u32(options.opt_level);
  out.u8(options.host_cpu ? 1 : 0);
  out.raw(key);
  out.u64(bytes.size());
  out.raw(bytes);
  const Key digest = sha256(out.bytes());
  out.raw(digest);
  return std::move(out.bytes());
}

Result<ObjectCode> ObjectCode::deserialize(std::span<const uint8_t> data) {
  const auto corrupt = [](std::string why) {
    return Error{ErrorKind::corrupt_object, "not a gov object: " + why};
  };
  if (data.size() < kMagic.size() + sizeof(Key) ||
      std::memcmp(data.data(), kMagic.data(), kMagic.size()) != 0) {
    return corrupt("bad magic number");
  }
  const std::span<const uint8_t> body = data.first(data.size() - sizeof(Key));
  const Key digest = sha256(body);
  if (std::memcmp(digest.data(), data.data() + body.size(), sizeof(Key)) != 0)
    return corrupt("checksum mismatch");
  ByteReader in(body);
  in.raw(kMagic.size());
  if (in.little_endian(4) != kFormatVersion) return corrupt("unsupported format version");
  ObjectCode object;
  object.options.opt_level = static_cast<unsigned>(in.little_endian(4));
  object.options.host_cpu = in.little_endian(1) != 0;
  const std::span<const uint8_t> key = in.raw(sizeof(Key));
  if (in.ok()) std::memcpy(object.key.data(), key.data(), key.size());
  const std::span<const uint8_t> bytes = in.raw(in.little_endian(8));
  if (!in.ok() || in.offset() != body.size()) return corrupt("truncated or oversized payload");
  object.bytes.assign(bytes.begin(), bytes.end());
  return object;
}

}  // namespace gov::jit
