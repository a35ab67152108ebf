// The store's results: support::Expected and support::Error (compiler/support/expected.hpp),
// the one error shape below the public API, under the store's short names.
#pragma once

#include "compiler/support/expected.hpp"

namespace gov::store {

using support::Error;
using support::ErrorKind;
using support::error_kind_name;
template <class T>
using Result = support::Expected<T>;

}  // namespace gov::store
