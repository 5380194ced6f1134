// OpenSSL's libcrypto functions as kaja calls them: each opens libcrypto.so.3 on its first
// call (core/util/lazy_library.h), so only the commands that sign, verify or draw random
// bytes load it.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "core/util/lazy_library.h"

namespace {
kaja::core::util::LazyLibrary& crypto() { return kaja::core::util::cryptoLibrary(); }
}  // namespace

KAJA_LAZY_FUNCTION(crypto(), int, BIO_free, (BIO * bio), (bio))
KAJA_LAZY_FUNCTION(crypto(), BIO*, BIO_new_mem_buf, (const void* buffer, int length),
                   (buffer, length))
KAJA_LAZY_FUNCTION(crypto(), int, BN_bn2binpad, (const BIGNUM* number, unsigned char* to, int size),
                   (number, to, size))
KAJA_LAZY_FUNCTION(crypto(), int, CRYPTO_memcmp, (const void* a, const void* b, size_t length),
                   (a, b, length))
KAJA_LAZY_FUNCTION(crypto(), void, ECDSA_SIG_free, (ECDSA_SIG * signature), (signature))
KAJA_LAZY_FUNCTION(crypto(), void, ECDSA_SIG_get0,
                   (const ECDSA_SIG* signature, const BIGNUM** r, const BIGNUM** s),
                   (signature, r, s))
KAJA_LAZY_FUNCTION(crypto(), ECDSA_SIG*, d2i_ECDSA_SIG,
                   (ECDSA_SIG * *into, const unsigned char** in, long length), (into, in, length))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_DecodeBlock,
                   (unsigned char* to, const unsigned char* from, int length), (to, from, length))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_EncodeBlock,
                   (unsigned char* to, const unsigned char* from, int length), (to, from, length))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_Digest,
                   (const void* data, size_t count, unsigned char* digest, unsigned int* size,
                    const EVP_MD* type, ENGINE* engine),
                   (data, count, digest, size, type, engine))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_DigestSign,
                   (EVP_MD_CTX * context, unsigned char* signature, size_t* size,
                    const unsigned char* data, size_t length),
                   (context, signature, size, data, length))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_DigestSignInit,
                   (EVP_MD_CTX * context, EVP_PKEY_CTX** keyContext, const EVP_MD* type,
                    ENGINE* engine, EVP_PKEY* key),
                   (context, keyContext, type, engine, key))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_DigestVerify,
                   (EVP_MD_CTX * context, const unsigned char* signature, size_t size,
                    const unsigned char* data, size_t length),
                   (context, signature, size, data, length))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_DigestVerifyInit,
                   (EVP_MD_CTX * context, EVP_PKEY_CTX** keyContext, const EVP_MD* type,
                    ENGINE* engine, EVP_PKEY* key),
                   (context, keyContext, type, engine, key))
KAJA_LAZY_FUNCTION(crypto(), void, EVP_MD_CTX_free, (EVP_MD_CTX * context), (context))
KAJA_LAZY_FUNCTION(crypto(), EVP_MD_CTX*, EVP_MD_CTX_new, (void), ())
KAJA_LAZY_FUNCTION(crypto(), void, EVP_PKEY_free, (EVP_PKEY * key), (key))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_PKEY_get_base_id, (const EVP_PKEY* key), (key))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_PKEY_get_id, (const EVP_PKEY* key), (key))
KAJA_LAZY_FUNCTION(crypto(), int, EVP_PKEY_get_raw_public_key,
                   (const EVP_PKEY* key, unsigned char* to, size_t* length), (key, to, length))
KAJA_LAZY_FUNCTION(crypto(), EVP_PKEY*, EVP_PKEY_new_raw_public_key,
                   (int type, ENGINE* engine, const unsigned char* key, size_t length),
                   (type, engine, key, length))
KAJA_LAZY_FUNCTION(crypto(), const EVP_MD*, EVP_sha256, (void), ())
KAJA_LAZY_FUNCTION(crypto(), unsigned char*, HMAC,
                   (const EVP_MD* type, const void* key, int keyLength, const unsigned char* data,
                    size_t length, unsigned char* digest, unsigned int* digestLength),
                   (type, key, keyLength, data, length, digest, digestLength))
KAJA_LAZY_FUNCTION(crypto(), EVP_PKEY*, PEM_read_bio_PUBKEY,
                   (BIO * bio, EVP_PKEY** into, pem_password_cb* callback, void* data),
                   (bio, into, callback, data))
KAJA_LAZY_FUNCTION(crypto(), EVP_PKEY*, PEM_read_bio_PrivateKey,
                   (BIO * bio, EVP_PKEY** into, pem_password_cb* callback, void* data),
                   (bio, into, callback, data))
KAJA_LAZY_FUNCTION(crypto(), int, RAND_bytes, (unsigned char* to, int count), (to, count))
KAJA_LAZY_FUNCTION(crypto(), unsigned char*, SHA256,
                   (const unsigned char* data, size_t length, unsigned char* digest),
                   (data, length, digest))
