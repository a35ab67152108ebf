# The embedded path's benchmarks (embedded_bench.cpp): the C++ API and the C ABI of gov::runtime.
target_sources(gov-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/embedded_bench.cpp)
target_link_libraries(gov-bench PRIVATE gov::runtime)
