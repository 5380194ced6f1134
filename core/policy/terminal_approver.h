#pragma once

#include <istream>
#include <memory>
#include <ostream>

#include "core/error.h"
#include "core/policy/approval.h"

namespace kaja::core::policy {

/// Asks a person on a terminal: shows the server, the tool and the exact arguments as JSON,
/// then reads y (yes), n (no, also the default and end of input) or a (yes to this tool for
/// the rest of the session; not offered for confirm-listed tools). Names and arguments are
/// shown with control and invisible characters escaped, so a server cannot redraw the prompt.
class TerminalApprover final : public Approver {
 public:
  /// Reads answers from `in` and writes prompts to `out`; both must outlive the approver.
  TerminalApprover(std::istream& in, std::ostream& out);
  ~TerminalApprover() override;

  /// Returns an approver on /dev/tty (opened O_RDWR|O_CLOEXEC|O_NOCTTY), so prompts work
  /// while stdin and stdout carry other data; kIo naming open(/dev/tty) when there is none.
  static Result<std::unique_ptr<TerminalApprover>> openTty();

  ApprovalReply ask(const ApprovalRequest& request) override;
  [[nodiscard]] bool isPerson() const override { return true; }

 private:
  struct Tty;
  TerminalApprover(std::unique_ptr<Tty> tty);

  std::unique_ptr<Tty> tty_;  ///< set only by openTty(); owns the fd the streams use
  std::istream& in_;
  std::ostream& out_;
};

/// Returns `text` with every invisible character (see isInvisible) written as a JSON
/// \uXXXX escape, so a person sees what a model would receive.
std::string escapeInvisibles(std::string_view text);

}  // namespace kaja::core::policy
