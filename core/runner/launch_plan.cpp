#include "core/runner/launch_plan.h"

namespace kaja::core {
namespace {

std::string shellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789@%+=:,./_-") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

const char* toString(RunnerKind kind) {
  switch (kind) {
    case RunnerKind::kBunx: return "bunx";
    case RunnerKind::kNpx: return "npx";
    case RunnerKind::kUvx: return "uvx";
    case RunnerKind::kPipx: return "pipx";
    case RunnerKind::kDocker: return "docker";
    case RunnerKind::kCommand: return "command";
    case RunnerKind::kRemote: return "remote";
  }
  return "command";
}

std::string LaunchPlan::display() const {
  std::string out;
  for (const auto& name : shownEnv) {
    if (!out.empty()) out += ' ';
    out += name + "=…";
  }
  for (const auto& word : argv) {
    if (!out.empty()) out += ' ';
    out += shellQuote(word);
  }
  return out;
}

}  // namespace kaja::core
