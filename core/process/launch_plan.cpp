#include "core/process/launch_plan.h"

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

void setEnvVar(std::vector<EnvVar>& env, const std::string& name, const std::string& value) {
  for (auto& var : env) {
    if (var.name == name) {
      var.value = value;
      return;
    }
  }
  env.push_back({name, value, false});
}

std::string LaunchPlan::display(bool shortProgram) const {
  std::string out;
  for (const auto& name : shownEnv) {
    if (!out.empty()) out += ' ';
    out += name + "=…";
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    if (!out.empty()) out += ' ';
    std::string word = argv[i];
    if (i == 0 && shortProgram) word = word.substr(word.rfind('/') + 1);
    out += shellQuote(word);
  }
  return out;
}

}  // namespace kaja::core
