#include "core/auth/metadata.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/net/address_guard.h"
#include "core/util/quote.h"

namespace kaja::core::auth {
namespace {

using Json = nlohmann::json;

Result<Json> parseObject(std::string_view body, const std::string& from, const char* what) {
  if (body.size() > kMaxMetadataBytes) {
    return fail(ErrorCode::kProtocol, from + " sent " + what + " larger than " +
                                          std::to_string(kMaxMetadataBytes / 1024) +
                                          " KB; kaja does not read it");
  }
  Json json = Json::parse(body, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    return fail(ErrorCode::kProtocol, from + " did not send " + what + " as a JSON object");
  }
  return json;
}

// Reads an optional string field; false when it is there but not a string.
bool readString(const Json& json, const char* field, std::string& out) {
  const auto it = json.find(field);
  if (it == json.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

// Reads an optional array of strings; non-strings in it are dropped.
bool readStrings(const Json& json, const char* field, std::vector<std::string>& out) {
  const auto it = json.find(field);
  if (it == json.end() || it->is_null()) return true;
  if (!it->is_array()) return false;
  for (const auto& item : *it) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return true;
}

Error badField(const std::string& from, const char* what, const char* field, const char* shape) {
  return Error{ErrorCode::kProtocol,
               from + " sent " + what + " whose " + field + " is not " + shape,
               {},
               {}};
}

}  // namespace

Result<ResourceMetadata> parseResourceMetadata(std::string_view body, const std::string& from) {
  constexpr const char* kWhat = "protected resource metadata";
  auto json = parseObject(body, from, kWhat);
  if (!json) return std::unexpected(json.error());
  ResourceMetadata out;
  if (!readString(*json, "resource", out.resource) || out.resource.empty()) {
    return std::unexpected(badField(from, kWhat, "resource", "a URL"));
  }
  if (!readStrings(*json, "authorization_servers", out.authorizationServers)) {
    return std::unexpected(badField(from, kWhat, "authorization_servers", "a list of URLs"));
  }
  if (!readStrings(*json, "scopes_supported", out.scopesSupported)) {
    return std::unexpected(badField(from, kWhat, "scopes_supported", "a list of scopes"));
  }
  return out;
}

Result<ServerMetadata> parseServerMetadata(std::string_view body, const std::string& from) {
  constexpr const char* kWhat = "authorization server metadata";
  auto json = parseObject(body, from, kWhat);
  if (!json) return std::unexpected(json.error());
  ServerMetadata out;
  struct Field {
    const char* name;
    std::string* into;
    bool required;
  };
  for (const Field& field : {Field{"issuer", &out.issuer, true},
                             Field{"authorization_endpoint", &out.authorizationEndpoint, true},
                             Field{"token_endpoint", &out.tokenEndpoint, true},
                             Field{"registration_endpoint", &out.registrationEndpoint, false}}) {
    if (!readString(*json, field.name, *field.into) || (field.required && field.into->empty())) {
      return std::unexpected(badField(from, kWhat, field.name, "a URL"));
    }
  }
  struct List {
    const char* name;
    std::vector<std::string>* into;
  };
  for (const List& list :
       {List{"scopes_supported", &out.scopesSupported},
        List{"code_challenge_methods_supported", &out.codeChallengeMethods},
        List{"token_endpoint_auth_methods_supported", &out.tokenEndpointAuthMethods}}) {
    if (!readStrings(*json, list.name, *list.into)) {
      return std::unexpected(badField(from, kWhat, list.name, "a list of strings"));
    }
  }
  out.clientIdMetadataDocumentSupported =
      json->value("client_id_metadata_document_supported", Json(false)) == Json(true);
  out.issParameterSupported =
      json->value("authorization_response_iss_parameter_supported", Json(false)) == Json(true);
  return out;
}

bool resourceCovers(const std::string& resource, const net::Url& serverUrl) {
  if (resource.find_first_of("?#") != std::string::npos) return false;
  auto parsed = net::parseUrl(resource);
  if (!parsed || !net::sameOrigin(*parsed, serverUrl)) return false;
  std::string path = parsed->path;
  if (path.empty()) path = "/";
  std::string target = serverUrl.path;
  if (const auto cut = target.find_first_of("?#"); cut != std::string::npos) target.resize(cut);
  if (target.empty()) target = "/";
  if (!path.ends_with('/')) path += '/';
  if (!target.ends_with('/')) target += '/';
  return target.starts_with(path);
}

bool lists(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string secretMethod(const std::vector<std::string>& methods) {
  return lists(methods, "client_secret_post") && !lists(methods, "client_secret_basic")
             ? "client_secret_post"
             : "client_secret_basic";
}

bool isLoopbackUrl(const net::Url& url) {
  if (url.host == "localhost") return true;
  auto address = net::parseIpAddress(url.host);
  return address && net::classify(*address) == net::AddressClass::kLoopback;
}

Result<net::Url> checkEndpoint(const std::string& endpoint, std::string_view field,
                               const std::string& issuer) {
  auto url = net::parseUrl(endpoint);
  if (!url) {
    return fail(ErrorCode::kRefused, "the " + std::string(field) + " of " +
                                         quoteForMessage(issuer) + " is not an http(s) URL");
  }
  if (url->scheme != "https" && !isLoopbackUrl(*url)) {
    return fail(ErrorCode::kRefused, "the " + std::string(field) + " of " +
                                         quoteForMessage(issuer) + " is plain http (" +
                                         url->origin() +
                                         "); kaja sends codes and secrets only over https");
  }
  return url;
}

}  // namespace kaja::core::auth
