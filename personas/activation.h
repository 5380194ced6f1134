#pragma once

#include <string>
#include <vector>

#include "core/host/host.h"
#include "core/manifest/secrets.h"
#include "core/runner/runner_resolver.h"
#include "personas/persona_resolver.h"

namespace kaja::personas {

/// What the host should connect for a persona, and what it leaves aside with why.
struct ActivationPlan {
  std::vector<core::Activation> activations;
  std::vector<std::string> skipped;  ///< one sentence per ability that is off or left out
  std::vector<std::string> refused;  ///< of those, the ones a rule refused (the allow-list)
};

/// Turns a resolved persona into activations: each ability's runner, key and MCP roots (its
/// folders as file:// URIs). Abilities that are off (no key, no folders) or left out
/// (nothing can start them) are skipped with a sentence that says why (K9, K14).
ActivationPlan planActivations(const ResolvedPersona& persona, const core::RunnerContext& runners,
                               const core::Secrets& secrets);

}  // namespace kaja::personas
