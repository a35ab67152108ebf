// The Catch2 main of gov_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
