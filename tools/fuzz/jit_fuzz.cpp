// gov-jit-fuzz: a differential fuzzing campaign, JIT against interpreter, on random rules.
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/jit/fuzz/differential.hpp"
#include "compiler/jit/jit.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Campaign {
  std::optional<double> seconds;
  std::optional<uint64_t> iterations;
  uint64_t seed = 1;
  size_t inputs = 1000;
  gov::jit::fuzz::GeneratorOptions generator;
  gov::jit::Options jit;
};

constexpr std::string_view kUsage =
    "usage: gov-jit-fuzz (--seconds N | --iterations N) [--seed S] [--inputs N] [--rules N] "
    "[--max-condition N]\n"
    "                    [--opt-level 0-3] [--host-cpu 0|1]\n"
    "Compiles random modules (trial i uses seed S+i) and compares every verdict of the JIT with "
    "the\n"
    "interpreter's; prints a shrunk reproducer and exits 1 on the first disagreement.\n";

/// Parses the command line; nullopt (after printing why) on a usage error.
std::optional<Campaign> parse(int argc, char** argv) {
  Campaign campaign;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      fmt::print("{}", kUsage);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      fmt::print(stderr, "gov-jit-fuzz: `{}` needs a value\n{}", flag, kUsage);
      return std::nullopt;
    }
    char* end = nullptr;
    const uint64_t value = std::strtoull(argv[++i], &end, 10);
    if (end == argv[i] || *end != '\0') {
      fmt::print(stderr, "gov-jit-fuzz: `{}` is not a number\n", argv[i]);
      return std::nullopt;
    }
    if (flag == "--seconds")
      campaign.seconds = static_cast<double>(value);
    else if (flag == "--iterations")
      campaign.iterations = value;
    else if (flag == "--seed")
      campaign.seed = value;
    else if (flag == "--inputs")
      campaign.inputs = value;
    else if (flag == "--rules")
      campaign.generator.rules = value;
    else if (flag == "--max-condition")
      campaign.generator.max_condition = value;
    else if (flag == "--opt-level")
      campaign.jit.opt_level = static_cast<unsigned>(value);
    else if (flag == "--host-cpu")
      campaign.jit.host_cpu = value != 0;
    else {
      fmt::print(stderr, "gov-jit-fuzz: unknown option `{}`\n{}", flag, kUsage);
      return std::nullopt;
    }
  }
  if (!campaign.seconds && !campaign.iterations) campaign.iterations = 1000;
  return campaign;
}

int run(const Campaign& campaign) {
  const Clock::time_point start = Clock::now();
  Clock::time_point last_report = start;
  uint64_t rules = 0;
  uint64_t verdicts = 0;
  uint64_t trial = 0;
  const auto elapsed = [&start] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  for (; (!campaign.iterations || trial < *campaign.iterations) &&
         (!campaign.seconds || elapsed() < *campaign.seconds);
       ++trial) {
    const uint64_t seed = campaign.seed + trial;
    const gov::jit::fuzz::TrialOutcome outcome =
        gov::jit::fuzz::run_trial(seed, campaign.generator, campaign.inputs, campaign.jit);
    if (outcome.error) {
      fmt::print(stderr, "gov-jit-fuzz: seed {}: the JIT failed: {}\n", seed,
                 outcome.error->message);
      return 1;
    }
    if (outcome.mismatch) {
      fmt::print(
          stderr,
          "gov-jit-fuzz: seed {} (rerun with the same options and --seed {} --iterations 1):\n{}",
          seed, seed, gov::jit::fuzz::describe(*outcome.mismatch));
      return 1;
    }
    rules += outcome.rules;
    verdicts += outcome.verdicts;
    if (std::chrono::duration<double>(Clock::now() - last_report).count() >= 10) {
      last_report = Clock::now();
      fmt::print(stderr, "gov-jit-fuzz: {} modules, {} rules, {:.0f} s\n", trial + 1, rules,
                 elapsed());
    }
  }
  fmt::print(
      "gov-jit-fuzz: {} modules ({} rules) x {} inputs, seeds {}..{}: {} verdicts agree, "
      "{} codegen runs, {:.1f} s\n",
      trial, rules, campaign.inputs, campaign.seed, campaign.seed + trial - (trial > 0 ? 1 : 0),
      verdicts, gov::jit::codegen_count(), elapsed());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Campaign> campaign = parse(argc, argv);
  if (!campaign) return 2;
  return run(*campaign);
}
