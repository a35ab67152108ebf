// Entry points of gov::jit: rules of an IR module -> native object code -> an Evaluator.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/ir/evaluator.hpp"
#include "compiler/ir/module.hpp"
#include "compiler/support/expected.hpp"

namespace gov::jit {

// ------------------------------------------------------------------ errors

// Errors are the one shape below the public API (compiler/support/expected.hpp); the JIT's
// kinds: invalid_module, stale_object, corrupt_object (recompile) and llvm (use the
// interpreter). Result<T> is a value or an Error; it never throws.
using support::Error;
using support::ErrorKind;
template <typename T>
using Result = support::Expected<T>;

// ------------------------------------------------------------------ object code

/// Code generation settings; they are part of the cache key.
struct Options {
  /// Optimisation level of the IR pipeline, 0..3; the code generator runs at its default level
  /// for 1 and 2 (none at 0, aggressive at 3). The engine uses 1, gov's own short pipeline
  /// (codegen.cpp): LLVM's O1 and O2 take 43% and 62% more instructions to compile compile.gov,
  /// for hot paths no shorter (docs/perf/analysis.md). 2 and 3 are LLVM's O2 and O3.
  unsigned opt_level = 1;
  /// true: tune for and use every feature of this machine's CPU (the object then loads only
  /// on the same CPU model); false: the baseline CPU of the target triple.
  bool host_cpu = true;
};

/// SHA-256 of everything the machine code depends on (see compile()).
using Key = std::array<uint8_t, 32>;

/// A relocatable object file with the native functions in it, plus the key it was built for.
/// Plain data: copy it, store it, send it to another thread.
struct ObjectCode {
  std::vector<uint8_t> bytes;  // an ELF (or the host's) relocatable object
  Key key{};
  Options options;

  /// A self-describing byte string (magic, version, options, key, bytes, SHA-256 of all
  /// of it) for a store or a file.
  std::vector<uint8_t> serialize() const;
  /// The inverse of serialize(); ErrorKind::corrupt_object for anything it did not write.
  static Result<ObjectCode> deserialize(std::span<const uint8_t> data);
};

/// The key as 64 lower-case hex digits.
std::string to_hex(const Key& key);

/// The key compile() would give `module` with `options` on this machine. The key covers
/// a canonical serialisation of what the code depends on (each rule's instructions, the
/// registers its message shows, the constant sets, the number of label keys, the declared
/// quota cells, class weights and team preemption policies; not names or message text), the
/// version of gov's code generator (bumped whenever the code it generates changes), the LLVM version,
/// the target triple, CPU name and features, the options and the layout of ir::RuleInput. Fails only when LLVM cannot initialise the native target.
Result<Key> key_for(const ir::Module& module, const Options& options = {});

/// Lowers the module to native functions (every rule's condition in `gov_rules`, message
/// values in `gov_messages`, the quota fit, priority and may-preempt predicate with the
/// module's quotas, classes and policies as constants; lower_rules.hpp), optimises them (O2
/// by default) and emits a relocatable object. Thread-safe (each call has its own LLVM context).
/// Errors: invalid_module for malformed rule code, llvm when LLVM fails.
Result<ObjectCode> compile(const ir::Module& module, const Options& options = {});

/// The optimised LLVM IR of compile(), as text (`gov check --emit=llvm`).
Result<std::string> emit_llvm(const ir::Module& module, const Options& options = {});
/// The assembly compile() would assemble, as text (`gov check --emit=asm`).
Result<std::string> emit_asm(const ir::Module& module, const Options& options = {});

/// How many times this process ran LLVM's code generator (compile() and emit_asm() each
/// count once), so tests can prove that loading cached bytes generates no code.
uint64_t codegen_count();

// ------------------------------------------------------------------ loading

/// The native functions of one loaded object (their C ABI; lower_rules.hpp).
struct NativeFunctions {
  void (*rules)(const ir::RuleInput*, uint8_t*) = nullptr;
  void (*messages)(const ir::RuleInput*, uint64_t, int64_t*) = nullptr;
  uint32_t (*fit)(const ir::FitInput*) = nullptr;
  int32_t (*priority)(int32_t) = nullptr;
  uint8_t (*may_preempt)(const ir::PreemptionPair*) = nullptr;
  void (*decide)(const ir::DecideInput*, ir::DecideResult*) = nullptr;
};

/// Evaluates by calling the loaded native code: every Evaluator function is one indirect
/// call. Immutable and thread-safe; it owns its code, which is unmapped when the evaluator is
/// destroyed. It does not refer to the module it was loaded for.
class JitEvaluator final : public ir::Evaluator {
 public:
  struct Loaded;  // the linked code (LLVM types; defined in loader.cpp)

  explicit JitEvaluator(std::unique_ptr<Loaded> loaded);
  ~JitEvaluator() override;
  JitEvaluator(const JitEvaluator&) = delete;
  JitEvaluator& operator=(const JitEvaluator&) = delete;

  /// `verdicts` must have at least rule_count() entries.
  void evaluate_rules(const ir::RuleInput& input, std::span<uint8_t> verdicts) const override;
  /// `values` must have an entry per part of the rule's message.
  void message_values(size_t rule, const ir::RuleInput& input,
                      std::span<int64_t> values) const override;
  int32_t priority(int32_t class_index) const override { return native_.priority(class_index); }
  ir::FitResult fit(const ir::FitInput& input) const override {
    return ir::FitResult::unpack(native_.fit(&input));
  }
  bool may_preempt(const ir::PreemptionPair& pair) const override {
    return native_.may_preempt(&pair) != 0;
  }
  ir::DecideResult decide(const ir::DecideInput& input) const override {
    ir::DecideResult result;
    native_.decide(&input, &result);
    return result;
  }
  std::string_view name() const override { return "jit"; }
  size_t rule_count() const { return rule_count_; }
  /// The raw entry points (for benchmarks and the embedding API's fastest path).
  const NativeFunctions& native() const { return native_; }

 private:
  std::unique_ptr<Loaded> loaded_;
  NativeFunctions native_;
  size_t rule_count_ = 0;
};

/// Links `object` into the process (its own JITDylib of a process-wide LLJIT) and
/// returns an evaluator for `module`'s rules. Generates no code. Thread-safe.
/// Errors: stale_object when the object's key is not the key of `module` on this machine
/// with the object's options and this gov's code generator (the caller recompiles), llvm when LLVM cannot initialise
/// or link (the caller falls back to the interpreter).
Result<std::unique_ptr<JitEvaluator>> load(const ir::Module& module, const ObjectCode& object);

/// compile() then load(): the convenient path when nothing is cached.
Result<std::unique_ptr<JitEvaluator>> compile_and_load(const ir::Module& module,
                                                       const Options& options = {});

}  // namespace gov::jit
