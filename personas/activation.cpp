#include "personas/activation.h"

namespace kaja::personas {

ActivationPlan planActivations(const ResolvedPersona& persona, const core::RunnerContext& runners,
                               const core::Secrets& secrets) {
  ActivationPlan plan;
  for (const auto& active : persona.abilities) {
    const std::string& name = active.ability.name;
    if (active.off) {
      plan.skipped.push_back(name + " is off: " + active.offReason);
      continue;
    }
    core::Resolution resolution = core::resolveAbility(active.ability, runners, secrets.key(name));
    if (resolution.state != core::AbilityState::kOn) {
      plan.skipped.push_back(name + " is " + core::toString(resolution.state) + ": " +
                             resolution.reason);
      if (resolution.state == core::AbilityState::kRefused) plan.refused.push_back(name);
      continue;
    }
    core::Activation activation{active.ability, std::move(resolution), {}};
    if (active.ability.roots) {
      for (const auto& root : active.roots) {
        activation.roots.push_back({core::mcp::fileUri(root.path), root.written});
      }
    }
    plan.activations.push_back(std::move(activation));
  }
  return plan;
}

}  // namespace kaja::personas
