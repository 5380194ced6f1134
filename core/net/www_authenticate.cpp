#include "core/net/www_authenticate.h"

#include <algorithm>
#include <cctype>

namespace kaja::core::net {
namespace {

bool isTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c)) != 0) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A cursor over the header value.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  [[nodiscard]] bool done() const { return pos_ >= text_.size(); }
  [[nodiscard]] char peek() const { return done() ? '\0' : text_[pos_]; }
  void skip() { ++pos_; }
  void skipSpace() {
    while (!done() && (peek() == ' ' || peek() == '\t')) ++pos_;
  }
  std::string_view token() {
    const std::size_t start = pos_;
    while (!done() && isTokenChar(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // After the opening quote; false when the string does not end.
  bool quoted(std::string& out) {
    while (!done()) {
      char c = text_[pos_++];
      if (c == '"') return true;
      if (c == '\\') {
        if (done()) return false;
        c = text_[pos_++];
      }
      out.push_back(c);
    }
    return false;
  }
  [[nodiscard]] std::size_t position() const { return pos_; }
  void rewind(std::size_t pos) { pos_ = pos; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

bool isToken68Char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("-._~+/").find(c) != std::string_view::npos;
}

// Skips a token68 (RFC 9110 §11.2: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" )
// *"=") at the cursor when one stands there alone, up to the comma or the end; otherwise
// leaves the cursor where it was (parameters follow).
void skipToken68(Reader& reader) {
  const std::size_t start = reader.position();
  std::size_t length = 0;
  while (!reader.done() && isToken68Char(reader.peek())) {
    reader.skip();
    ++length;
  }
  while (length > 0 && reader.peek() == '=') reader.skip();
  reader.skipSpace();
  if (length == 0 || (!reader.done() && reader.peek() != ',')) reader.rewind(start);
}

// Reads `name=value` at the cursor into `challenge`; false (cursor unchanged) when what
// follows is not a parameter, which starts the next challenge.
bool readParam(Reader& reader, Challenge& challenge, bool& broken) {
  const std::size_t start = reader.position();
  const std::string_view name = reader.token();
  reader.skipSpace();
  if (name.empty() || reader.peek() != '=') {
    reader.rewind(start);
    return false;
  }
  reader.skip();
  reader.skipSpace();
  std::string value;
  if (reader.peek() == '"') {
    reader.skip();
    if (!reader.quoted(value)) {
      broken = true;
      return false;
    }
  } else {
    value = std::string(reader.token());
  }
  challenge.params.emplace(lower(name), std::move(value));
  return true;
}

}  // namespace

std::string Challenge::param(const std::string& name) const {
  const auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

std::vector<Challenge> parseChallenges(std::string_view header) {
  if (header.size() > kMaxChallengeBytes) header = header.substr(0, kMaxChallengeBytes);
  std::vector<Challenge> out;
  Reader reader(header);
  bool broken = false;
  while (!reader.done() && !broken) {
    reader.skipSpace();
    while (reader.peek() == ',') {
      reader.skip();
      reader.skipSpace();
    }
    if (reader.done()) break;
    const std::string_view scheme = reader.token();
    if (scheme.empty()) break;  // not a challenge: nothing more can be read
    Challenge challenge;
    challenge.scheme = lower(scheme);
    reader.skipSpace();
    // A token68 (`Basic dXNlcg==`) right after the scheme: kaja reads none, so skip it.
    skipToken68(reader);
    // Parameters, comma-separated, until one that is not `name=` (the next scheme).
    while (!reader.done() && !broken) {
      reader.skipSpace();
      if (!readParam(reader, challenge, broken)) break;
      reader.skipSpace();
      if (reader.peek() != ',') break;
      reader.skip();
    }
    out.push_back(std::move(challenge));
  }
  return out;
}

std::optional<BearerChallenge> bearerChallenge(std::string_view header) {
  for (const auto& challenge : parseChallenges(header)) {
    if (challenge.scheme != "bearer") continue;
    return BearerChallenge{challenge.param("resource_metadata"), challenge.param("scope"),
                           challenge.param("error"), challenge.param("error_description")};
  }
  return std::nullopt;
}

namespace {

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
bool isScopeToken(std::string_view scope) {
  if (scope.empty() || scope.size() > 256) return false;
  return std::all_of(scope.begin(), scope.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x21 && byte <= 0x7E && c != '"' && c != '\\';
  });
}

}  // namespace

std::vector<std::string> splitScopes(std::string_view scopes) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < scopes.size() && out.size() < kMaxScopes) {
    const std::size_t end = scopes.find(' ', pos);
    const std::string_view scope =
        scopes.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (isScopeToken(scope) && std::find(out.begin(), out.end(), scope) == out.end()) {
      out.emplace_back(scope);
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return out;
}

std::string joinScopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const auto& scope : scopes) {
    if (!out.empty()) out += ' ';
    out += scope;
  }
  return out;
}

}  // namespace kaja::core::net
