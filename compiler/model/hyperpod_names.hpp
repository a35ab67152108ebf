// How gov writes what HyperPod's API, its console or a Python user writes another way: for the
// diagnostics that answer `sharing = LendAndBorrow` or `quota … { Count = 2 }` with the gov word.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gov::model {

/// `LendAndBorrow`, `lend_and_borrow`, `LEND_AND_BORROW` → `lend-and-borrow`; `MemoryInGiB` →
/// `memory-in-gib`. Lower-case words with hyphens are returned as they are.
std::string kebab_case(std::string_view word);

/// The gov word for a member of HyperPod's API that gov names differently, not only in another
/// case (`Count` → `instances`, `Accelerators` → `gpus`, `Strategy` → `sharing`), matched in any
/// case convention (`count`, `instance_count`); nullopt for any other word.
std::optional<std::string_view> gov_word_for_hyperpod_name(std::string_view word);

/// The team of a LocalQueue HyperPod names: `hyperpod-ns-<team>-localqueue` is `<team>`; nullopt
/// for any other queue name.
std::optional<std::string> hyperpod_queue_team(std::string_view queue);

}  // namespace gov::model
