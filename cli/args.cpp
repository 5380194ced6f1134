#include "cli/args.h"

#include <algorithm>

#include "core/manifest/field_reader.h"

namespace kaja::cli {

bool ParsedArgs::has(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

std::optional<std::string> ParsedArgs::value(std::string_view flag) const {
  for (const auto& [name, given] : values) {
    if (name == flag) return given;
  }
  return std::nullopt;
}

core::Result<ParsedArgs> parseArgs(std::span<const std::string> args,
                                   std::initializer_list<std::string_view> known,
                                   std::initializer_list<std::string_view> valued) {
  ParsedArgs out;
  bool flagsDone = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!flagsDone && arg.starts_with("--")) {
      std::string name = arg.substr(0, arg.find('='));
      if (std::find(valued.begin(), valued.end(), name) != valued.end()) {
        if (name.size() < arg.size()) {
          out.values.emplace_back(name, arg.substr(name.size() + 1));
        } else if (i + 1 < args.size()) {
          out.values.emplace_back(name, args[++i]);
        } else {
          return core::fail(core::ErrorCode::kUsage, name + " needs a value (see --help)");
        }
        continue;
      }
    }
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
    std::vector<std::string_view> all(known);
    all.insert(all.end(), valued.begin(), valued.end());
    if (std::string near = core::nearestWord(arg, all); !near.empty()) {
      message += "; did you mean " + near + "?";
    }
    return core::fail(core::ErrorCode::kUsage, message + " (see --help)");
  }
  return out;
}

}  // namespace kaja::cli
