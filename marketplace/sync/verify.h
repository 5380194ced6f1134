#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::marketplace::sync {

/// Returns the SHA-256 of `bytes` as 64 lower-case hex digits.
std::string sha256Hex(std::string_view bytes);

/// Returns `text` as a pin: 64 hex digits (any case, an optional "sha256:" in front),
/// lower-cased; kUsage naming what is wrong otherwise.
core::Result<std::string> parseSha256(std::string_view text);

/// An Ed25519 public key, its 32 raw bytes.
using PublicKey = std::array<std::uint8_t, 32>;

/// Parses a public key given as a PEM block ("-----BEGIN PUBLIC KEY-----", as `openssl pkey
/// -pubout` writes it), or as the base64 or hex of its 32 raw bytes. kUsage otherwise.
core::Result<PublicKey> parsePublicKey(std::string_view text);

/// Returns the key as base64 of its raw bytes, the form kaja stores.
std::string publicKeyText(const PublicKey& key);

/// Checks that `signature` (64 raw bytes, or their base64, as a `.sig` file holds them) is
/// an Ed25519 signature of `message` by `key`. kRefused when it is not.
core::Result<void> verifyEd25519(std::string_view message, std::string_view signature,
                                 const PublicKey& key);

}  // namespace kaja::marketplace::sync
