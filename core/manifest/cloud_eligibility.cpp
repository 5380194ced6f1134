// Which abilities the sandbox worker may run for cloud users (K19, K23).
#include "core/manifest/cloud_eligibility.h"

namespace kaja::core {

std::optional<std::string> cloudRefusal(const Ability& ability, bool shared) {
  const std::string name = "ability " + ability.name;
  if (ability.isRemote()) {
    return name + " is a remote server, which kaja reaches directly, not through a sandbox";
  }
  if (!ability.tools) {
    return name + " has no `tools` list, and only abilities that list their tools run in the cloud";
  }
  if (ability.roots) return name + " works on the user's own folders (roots), so it stays local";
  if (ability.localOnly) return name + " is marked localOnly, so it stays local";
  if (ability.cwd) {
    return name + " starts in one of the user's own folders (cwd), so it stays local";
  }
  if (ability.needsKey()) {
    return name + " needs a key, and a stdio server with a key stays on the user's machine";
  }
  if (shared && ability.trustedSandbox) {
    return name +
           " is trustedSandbox, which runs only in the user's own sandbox, never a shared one";
  }
  return std::nullopt;
}

bool validWorkerName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace kaja::core
