#include "cli/args.h"

#include <algorithm>

#include "core/manifest/field_reader.h"

namespace kaja::cli {

bool ParsedArgs::has(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

core::Result<ParsedArgs> parseArgs(std::span<const std::string> args,
                                   std::initializer_list<std::string_view> known) {
  ParsedArgs out;
  bool flagsDone = false;
  for (const auto& arg : args) {
    if (flagsDone || arg.size() < 2 || arg.front() != '-') {
      out.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flagsDone = true;
      continue;
    }
    if (arg == "--help" || arg == "-h" || arg == "--verbose" || arg == "-v" ||
        std::find(known.begin(), known.end(), arg) != known.end()) {
      out.flags.push_back(arg == "-h" ? "--help" : arg == "-v" ? "--verbose" : arg);
      continue;
    }
    std::string message = "unknown option " + arg;
    if (std::string near = core::nearestWord(arg, known); !near.empty()) {
      message += "; did you mean " + near + "?";
    }
    return core::fail(core::ErrorCode::kUsage, message + " (see --help)");
  }
  return out;
}

}  // namespace kaja::cli
