// Queue and candidate order break ties by task id; the store compares the ids' first 8 bytes as a
// number before it reads the strings (Task::id_key). The order must be std::string's.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "runtime/engine/task_store.hpp"

namespace gov::engine::test {
namespace {

Task with_id(std::string id) {
  Task task;
  task.id_key = id_key_of(id);
  task.id = std::move(id);
  return task;
}

void check_same_order(const std::string& a, const std::string& b) {
  const Task x = with_id(a);
  const Task y = with_id(b);
  INFO("ids of " << a.size() << " and " << b.size() << " bytes");
  CHECK(id_less(x, y) == (a < b));
  CHECK(id_less(y, x) == (b < a));
}

}  // namespace

TEST_CASE("task ids order by their keys exactly as the strings order", "[engine][queues]") {
  const std::vector<std::string> edge = {
      "",          "t",          "t1",        "t10",       "t2",        "t99999999", "t100000000",
      "abcdefgh",  "abcdefghi",  "abcdefgg",  "abcdefgh\x01", std::string("ab\0", 3),
      std::string("ab\0c", 4),   "ab",        "\xff",      "\x7f",      "\x80zz",    "zzzzzzzzzzzz"};
  for (const std::string& a : edge) {
    for (const std::string& b : edge) check_same_order(a, b);
  }
  // Random ids over a small alphabet that includes NUL and bytes above 0x7f, of lengths around 8.
  std::mt19937 rng(20261126);
  const std::string alphabet("\0\x01" "a-t9\x80\xff", 8);
  std::uniform_int_distribution<size_t> length(0, 11);
  std::uniform_int_distribution<size_t> letter(0, alphabet.size() - 1);
  const auto random_id = [&] {
    std::string id(length(rng), 'x');
    for (char& c : id) c = alphabet[letter(rng)];
    return id;
  };
  for (int i = 0; i < 20000; ++i) check_same_order(random_id(), random_id());
}

}  // namespace gov::engine::test
