// gov::jit's entry points: validate, lower, optimise, emit; the LLVM error boundary.
#include "compiler/jit/jit.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "compiler/jit/codegen.hpp"
#include "compiler/jit/lower_rules.hpp"
#include "compiler/jit/object_key.hpp"
#include "compiler/jit/target.hpp"
#include "compiler/jit/validate.hpp"

namespace gov::jit {
namespace {

/// An optimised LLVM module with what it was built in and for. Members are destroyed in
/// reverse order: the module before the context that owns its types.
struct Optimized {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::Module> module;
  Key key{};
};

/// Validates, lowers and optimises `module`. `keep_names` keeps value names (for text).
Result<Optimized> optimized(const ir::Module& module, const Options& options, bool keep_names) {
  if (std::optional<Error> invalid = validate(module)) return *invalid;
  if (Result<bool> ready = initialize_native_target(); !ready.ok()) return ready.error();
  const MachineDescription description = describe_machine(options);
  Result<std::unique_ptr<llvm::TargetMachine>> machine =
      create_target_machine(description, options);
  if (!machine.ok()) return machine.error();
  Optimized out;
  out.context = std::make_unique<llvm::LLVMContext>();
  out.context->setDiscardValueNames(!keep_names);
  out.machine = std::move(machine.value());
  out.module = lower_rules(module, *out.context, *out.machine);
  out.key = compute_key(module, description, options);
  if (Result<bool> done = jit::optimize(*out.module, *out.machine, opt_level(options)); !done.ok())
    return done.error();
  return out;
}

}  // namespace

Result<Key> key_for(const ir::Module& module, const Options& options) {
  if (Result<bool> ready = initialize_native_target(); !ready.ok()) return ready.error();
  return compute_key(module, describe_machine(options), options);
}

Result<ObjectCode> compile(const ir::Module& module, const Options& options) {
  Result<Optimized> lowered = optimized(module, options, /*keep_names=*/false);
  if (!lowered.ok()) return lowered.error();
  Optimized& code = lowered.value();
  Result<std::string> bytes = emit_machine_code(*code.module, *code.machine, EmitKind::object);
  if (!bytes.ok()) return bytes.error();
  ObjectCode object;
  object.bytes.assign(bytes.value().begin(), bytes.value().end());
  object.key = code.key;
  object.options = options;
  return object;
}

Result<std::string> emit_llvm(const ir::Module& module, const Options& options) {
  Result<Optimized> lowered = optimized(module, options, /*keep_names=*/true);
  if (!lowered.ok()) return lowered.error();
  std::string text;
  llvm::raw_string_ostream stream(text);
  lowered.value().module->print(stream, nullptr);
  stream.flush();
  return text;
}

Result<std::string> emit_asm(const ir::Module& module, const Options& options) {
  Result<Optimized> lowered = optimized(module, options, /*keep_names=*/true);
  if (!lowered.ok()) return lowered.error();
  return emit_machine_code(*lowered.value().module, *lowered.value().machine, EmitKind::assembly);
}

Result<std::unique_ptr<JitEvaluator>> compile_and_load(const ir::Module& module,
                                                       const Options& options) {
  Result<ObjectCode> object = compile(module, options);
  if (!object.ok()) return object.error();
  return load(module, object.value());
}

}  // namespace gov::jit
