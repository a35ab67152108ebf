// Links object code into a process-wide LLJIT, one JITDylib per loaded policy version.
#include <llvm/ADT/StringRef.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <mutex>
#include <optional>
#include <type_traits>

#include "compiler/support/assert.hpp"
#include "compiler/jit/jit.hpp"
#include "compiler/jit/lower_decisions.hpp"
#include "compiler/jit/lower_rules.hpp"
#include "compiler/jit/object_key.hpp"
#include "compiler/jit/target.hpp"

namespace gov::jit {
namespace {

Error llvm_error(const std::string& doing, llvm::Error error) {
  return Error{ErrorKind::llvm, doing + ": " + llvm::toString(std::move(error))};
}

/// Code linked into its own JITDylib, and the addresses of its functions.
struct Linked {
  llvm::orc::JITDylib* dylib = nullptr;
  NativeFunctions functions;
};

/// The process's LLJIT. Each loaded policy gets a JITDylib of its own, so every object
/// defines the same symbols and removing one JITDylib frees exactly that code. Link
/// and remove are serialised by a mutex: they are rare, and evaluation never takes it.
class JitHost {
 public:
  explicit JitHost(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}

  /// The shared instance, created on first use; ErrorKind::llvm when LLJIT cannot start.
  static Result<std::shared_ptr<JitHost>> shared();

  /// Adds `bytes` in a fresh JITDylib and resolves its functions (which links the object).
  Result<Linked> link(const std::vector<uint8_t>& bytes);
  void remove(llvm::orc::JITDylib& dylib);

 private:
  Result<NativeFunctions> link_into(llvm::orc::JITDylib& dylib, const std::vector<uint8_t>& bytes,
                                    const std::string& name);
  Result<void*> lookup(llvm::orc::JITDylib& dylib, std::string_view symbol);

  std::mutex mutex_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  uint64_t next_id_ = 0;
};

Result<std::shared_ptr<JitHost>> JitHost::shared() {
  static std::mutex mutex;
  static std::shared_ptr<JitHost> host;
  std::lock_guard lock(mutex);
  if (host) return host;
  // No platform: gov objects have no initialisers, and none of the runtime it would need.
  auto jit = llvm::orc::LLJITBuilder().setPlatformSetUp(llvm::orc::setUpInactivePlatform).create();
  if (!jit) return llvm_error("cannot start LLJIT", jit.takeError());
  host = std::make_shared<JitHost>(std::move(*jit));
  return host;
}

Result<Linked> JitHost::link(const std::vector<uint8_t>& bytes) {
  std::lock_guard lock(mutex_);
  const std::string name = "gov-policy-" + std::to_string(next_id_++);
  auto created = jit_->createJITDylib(name);
  if (!created) return llvm_error("cannot create a JITDylib", created.takeError());
  Result<NativeFunctions> functions = link_into(*created, bytes, name);
  if (!functions.ok()) {
    llvm::consumeError(jit_->getExecutionSession().removeJITDylib(*created));
    return functions.error();
  }
  return Linked{&*created, functions.value()};
}

Result<void*> JitHost::lookup(llvm::orc::JITDylib& dylib, std::string_view symbol) {
  auto address = jit_->lookup(dylib, llvm::StringRef(symbol.data(), symbol.size()));
  if (!address) return llvm_error("cannot link `" + std::string(symbol) + "`", address.takeError());
  return address->toPtr<void*>();
}

Result<NativeFunctions> JitHost::link_into(llvm::orc::JITDylib& dylib,
                                           const std::vector<uint8_t>& bytes,
                                           const std::string& name) {
  const llvm::StringRef contents(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (llvm::Error error =
          jit_->addObjectFile(dylib, llvm::MemoryBuffer::getMemBufferCopy(contents, name))) {
    return llvm_error("cannot add the object file", std::move(error));
  }
  NativeFunctions functions;
  // Each symbol's address, cast to the C ABI lower_rules.hpp gives it.
  const auto resolve = [&](std::string_view symbol, auto& function) -> std::optional<Error> {
    Result<void*> address = lookup(dylib, symbol);
    if (!address.ok()) return address.error();
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address.value());
    return std::nullopt;
  };
  for (std::optional<Error> error :
       {resolve(kRulesSymbol, functions.rules), resolve(kMessagesSymbol, functions.messages),
        resolve(kFitSymbol, functions.fit), resolve(kPrioritySymbol, functions.priority),
        resolve(kMayPreemptSymbol, functions.may_preempt), resolve(kDecideSymbol, functions.decide)}) {
    if (error) return *error;
  }
  return functions;
}

void JitHost::remove(llvm::orc::JITDylib& dylib) {
  std::lock_guard lock(mutex_);
  // Nothing to hand an error to in a destructor: report it and carry on (the code leaks).
  llvm::logAllUnhandledErrors(jit_->getExecutionSession().removeJITDylib(dylib), llvm::errs(),
                              "gov jit: ");
}

}  // namespace

struct JitEvaluator::Loaded {
  std::shared_ptr<JitHost> host;  // keeps the LLJIT alive as long as this code
  llvm::orc::JITDylib* dylib = nullptr;
  NativeFunctions functions;
  size_t rule_count = 0;

  ~Loaded() {
    if (dylib != nullptr) host->remove(*dylib);
  }
};

JitEvaluator::JitEvaluator(std::unique_ptr<Loaded> loaded)
    : loaded_(std::move(loaded)), native_(loaded_->functions), rule_count_(loaded_->rule_count) {
  decide_function_ = native_.decide;
}

JitEvaluator::~JitEvaluator() = default;

void JitEvaluator::evaluate_rules(const ir::RuleInput& input, std::span<uint8_t> verdicts) const {
  GOV_ASSERT(verdicts.size() >= rule_count_, "one verdict per rule");
  native_.rules(&input, verdicts.data());
}

void JitEvaluator::message_values(size_t rule, const ir::RuleInput& input,
                                  std::span<int64_t> values) const {
  native_.messages(&input, rule, values.data());
}

Result<std::unique_ptr<JitEvaluator>> load(const ir::Module& module, const ObjectCode& object) {
  if (Result<bool> ready = initialize_native_target(); !ready.ok()) return ready.error();
  const Key expected = compute_key(module, describe_machine(object.options), object.options);
  if (expected != object.key) {
    return Error{ErrorKind::stale_object,
                 "the object code was built for another module, code generator, LLVM, CPU or options (key " +
                     to_hex(object.key).substr(0, 16) + ", expected " +
                     to_hex(expected).substr(0, 16) + ")"};
  }
  Result<std::shared_ptr<JitHost>> host = JitHost::shared();
  if (!host.ok()) return host.error();
  auto loaded = std::make_unique<JitEvaluator::Loaded>();
  loaded->host = std::move(host.value());
  Result<Linked> linked = loaded->host->link(object.bytes);
  if (!linked.ok()) return linked.error();
  loaded->dylib = linked.value().dylib;
  loaded->functions = linked.value().functions;
  loaded->rule_count = module.rules.size();
  return std::make_unique<JitEvaluator>(std::move(loaded));
}

}  // namespace gov::jit
