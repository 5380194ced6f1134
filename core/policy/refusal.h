#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::core::policy {

/// The rules a pipeline step can refuse by. Each names its SPEC id so an audit row or a
/// message can be traced to the feature that asked for it.
namespace rule {
inline constexpr std::string_view kAbilityTools = "K1 ability tools";
inline constexpr std::string_view kPersonaTools = "K13 persona tools";
inline constexpr std::string_view kReadOnlyPersona = "K15 read-only persona";
inline constexpr std::string_view kReadOnlyFolder = "K15 read-only folder";
inline constexpr std::string_view kOutsideFolders = "K15 outside folders";
inline constexpr std::string_view kRelativePath = "K15 relative path";
inline constexpr std::string_view kUnsafePath = "K15 unsafe path";
inline constexpr std::string_view kLinkedFile = "K15 linked file";
inline constexpr std::string_view kKajaFiles = "K15 kaja's own files";
inline constexpr std::string_view kArguments = "K11 arguments too deep";
inline constexpr std::string_view kBackup = "K16 backup";
inline constexpr std::string_view kApproval = "K11 approval";
inline constexpr std::string_view kConfirmList = "U4 confirm list";
inline constexpr std::string_view kPromptInjection = "T7 prompt injection";
inline constexpr std::string_view kLocalOnlyArg = "K24 local-only argument";
}  // namespace rule

/// Why a step said no: the rule (one of `rule::k…`) and one sentence a user can read.
struct Refusal {
  std::string rule;
  std::string message;

  /// Returns the refusal as an Error with code kRefused; `context` says where (server, tool).
  [[nodiscard]] Error toError(std::string context = {}) const {
    return Error{ErrorCode::kRefused, message, std::move(context), "rule: " + rule};
  }
};

}  // namespace kaja::core::policy
