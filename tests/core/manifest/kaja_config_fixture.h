#pragma once

// Writes a config.toml into a fresh folder and loads it, for the tests of kaja's settings.
#include <gtest/gtest.h>

#include <string>

#include "core/manifest/kaja_config.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {

class KajaConfigFixture : public ::testing::Test {
 protected:
  /// Loads `text` as `<dir>/kaja/config.toml`, with `~` meaning /home/tester.
  Result<KajaConfig> load(const std::string& text) {
    file_ = dir_.write("kaja/config.toml", text);
    return loadKajaConfig(file_, "/home/tester");
  }
  kaja::testing::TempDir dir_;
  std::string file_;
};

}  // namespace kaja::core
