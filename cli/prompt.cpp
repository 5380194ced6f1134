#include "cli/prompt.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <iterator>

namespace kaja::cli {
namespace {

void writeAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Reads one line from the terminal; with `masked`, echo is off and '*' stands for each
// character typed.
std::optional<std::string> readTerminalLine(const std::string& prompt, bool masked) {
  int tty = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (tty < 0) return std::nullopt;
  termios saved{};
  bool restore = ::tcgetattr(tty, &saved) == 0;
  if (masked && restore) {
    termios raw = saved;
    raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON);
    ::tcsetattr(tty, TCSAFLUSH, &raw);
  }
  writeAll(tty, prompt);
  std::string line;
  char c = 0;
  while (::read(tty, &c, 1) == 1 && c != '\n' && c != '\r') {
    if (!masked) {
      line += c;
    } else if (c == 0x7f || c == '\b') {
      if (!line.empty()) {
        line.pop_back();
        writeAll(tty, "\b \b");
      }
    } else if (c == 0x03 || c == 0x04) {  // Ctrl-C, Ctrl-D: give up, keep nothing
      line.clear();
      break;
    } else {
      line += c;
      writeAll(tty, "*");
    }
  }
  if (masked) writeAll(tty, "\n");
  if (masked && restore) ::tcsetattr(tty, TCSAFLUSH, &saved);
  ::close(tty);
  return line;
}

}  // namespace

bool canPrompt() { return ::isatty(STDIN_FILENO) != 0 && ::isatty(STDERR_FILENO) != 0; }

std::string readKey(const std::string& prompt) {
  if (::isatty(STDIN_FILENO)) {
    if (auto key = readTerminalLine(prompt, true)) return *key;
  }
  std::string key((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  return key;
}

bool askYesNo(const std::string& question) {
  auto answer = readTerminalLine(question + " [y/N] ", false);
  return answer && !answer->empty() && (answer->front() == 'y' || answer->front() == 'Y');
}

}  // namespace kaja::cli
