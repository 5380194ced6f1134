#include "cli/args.h"

#include <algorithm>
#include <charconv>

#include "cli/output.h"
#include "core/manifest/field_reader.h"

namespace kaja::cli {
namespace {

// Options that may be given more than once, each time adding one more; any other option
// given twice is an error rather than one of the two silently winning.
constexpr std::string_view kRepeatable[] = {"--env", "--header", "--allow-private",
                                            "--allow-stdio"};

bool repeatable(std::string_view name) {
  return std::find(std::begin(kRepeatable), std::end(kRepeatable), name) != std::end(kRepeatable);
}

}  // namespace

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
        if (!repeatable(name) && out.value(name)) {
          return core::fail(core::ErrorCode::kUsage,
                            name + " is given twice; give it once (see --help)");
        }
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

core::Result<std::pair<std::string, std::uint16_t>> parseHostPort(std::string_view flag,
                                                                  const std::string& text,
                                                                  std::string_view example) {
  const std::string name(flag);
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 >= text.size()) {
    return core::fail(core::ErrorCode::kUsage, name + " takes HOST:PORT, like " +
                                                   std::string(example) + ", not \"" +
                                                   oneLine(text) + "\"");
  }
  std::string host = text.substr(0, colon);
  if (host.empty()) {
    return core::fail(core::ErrorCode::kUsage, name + " needs a host before the port, like " +
                                                   "127.0.0.1:" + oneLine(text.substr(1)));
  }
  std::uint32_t port = 0;
  const auto [end, ec] = std::from_chars(text.data() + colon + 1, text.data() + text.size(), port);
  if (ec != std::errc() || end != text.data() + text.size() || port > 65535) {
    return core::fail(core::ErrorCode::kUsage,
                      "the port in " + name + " " + oneLine(text) + " is not 0 to 65535");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  return std::make_pair(host, static_cast<std::uint16_t>(port));
}

core::Result<std::int64_t> parsePositive(std::string_view flag, const std::string& text,
                                         std::string_view what) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) {
    return core::fail(core::ErrorCode::kUsage, std::string(flag) + " takes " + std::string(what) +
                                                   ", not \"" + oneLine(text) + "\"");
  }
  return value;
}

}  // namespace kaja::cli
