// A master key for the keys tests: every byte `fill`, so two fills are two
// different keys.
#pragma once

#include "keys/secret_box.hpp"

namespace mr::test {

inline mr::MasterKey key_of(unsigned char fill) {
  mr::MasterKey k;
  k.bytes.fill(fill);
  return k;
}

}  // namespace mr::test
