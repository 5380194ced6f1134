#include "core/runner/child_env.h"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace kaja::core {
namespace {

constexpr std::array<std::string_view, 10> kPassedThrough = {"PATH",
                                                             "HOME",
                                                             "LANG",
                                                             "TMPDIR",
                                                             "SSL_CERT_FILE",
                                                             "SSL_CERT_DIR",
                                                             "NODE_EXTRA_CA_CERTS",
                                                             "REQUESTS_CA_BUNDLE",
                                                             "CURL_CA_BUNDLE",
                                                             "LC_ALL"};

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

void upsert(std::vector<EnvVar>& vars, EnvVar var) {
  for (auto& existing : vars) {
    if (existing.name == var.name) {
      existing = std::move(var);
      return;
    }
  }
  vars.push_back(std::move(var));
}

// Why `name` may not be set by an ability, as a warning; "" when it may.
std::string dropped(const std::string& abilityName, std::string_view name) {
  if (abilityMaySet(name)) return "";
  if (isLoaderVariable(name)) {
    return abilityName + ": env " + std::string(name) +
           " is dropped: it changes how programs are loaded, so kaja never lets an ability "
           "set it.";
  }
  std::string shown;
  for (const char c : name) shown += static_cast<unsigned char>(c) < ' ' || c == 0x7F ? '?' : c;
  return abilityName + ": env \"" + shown +
         "\" is dropped: a variable's name cannot be empty or hold '=', spaces or control "
         "characters.";
}

}  // namespace

HostEnv HostEnv::fromProcess() {
  HostEnv host;
  for (auto name : kPassedThrough) {
    if (const char* value = std::getenv(std::string(name).c_str())) {
      host.vars.push_back({std::string(name), value, false});
    }
  }
  return host;
}

std::string HostEnv::get(std::string_view name) const {
  for (const auto& var : vars) {
    if (var.name == name) return var.value;
  }
  return {};
}

void HostEnv::set(const std::string& name, const std::string& value) {
  upsert(vars, {name, value, false});
}

bool isLoaderVariable(std::string_view name) {
  // npm and the dynamic loaders accept any case on some systems, so compare upper-cased.
  std::string key = upper(name);
  static constexpr std::array<std::string_view, 8> kExact = {
      "PATH",     "HOME",      "NODE_OPTIONS", "NODE_PATH", "LD_PRELOAD", "LD_LIBRARY_PATH",
      "BASH_ENV", "PYTHONPATH"};
  if (std::find(kExact.begin(), kExact.end(), key) != kExact.end()) return true;
  return key.starts_with("DYLD_") || key.starts_with("NPM_CONFIG_") || key.starts_with("LD_");
}

bool abilityMaySet(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    if (c == '=' || static_cast<unsigned char>(c) <= ' ' || c == 0x7F) return false;
  }
  return !isLoaderVariable(name);
}

ChildEnv buildChildEnv(const HostEnv& host, const std::map<std::string, std::string>& abilityEnv,
                       const std::string& abilityName, const std::vector<EnvVar>& extra) {
  ChildEnv out;
  out.vars = host.vars;
  auto add = [&](EnvVar var) {
    if (std::string why = dropped(abilityName, var.name); !why.empty()) {
      out.warnings.push_back(std::move(why));
      return;
    }
    upsert(out.vars, std::move(var));
  };
  for (const auto& [name, value] : abilityEnv) add({name, value, false});
  for (const auto& var : extra) add(var);
  return out;
}

}  // namespace kaja::core
