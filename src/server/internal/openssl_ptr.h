// std::unique_ptr for OpenSSL objects, each freed by its own *_free function, so that no error
// path leaks one:
//
//   X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
//   if (!cert) return ...;  // freed on every path from here on
//
// Internal to src/server (pki.cc, http_server.cc and the tests): OpenSSL's headers stay out of
// public headers.
#pragma once

#include <memory>
#include <string>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace kt::server::internal {

template <auto Free>
struct OpenSslDeleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};

using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslDeleter<BN_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, OpenSslDeleter<X509_EXTENSION_free>>;
using GeneralNamePtr = std::unique_ptr<GENERAL_NAME, OpenSslDeleter<GENERAL_NAME_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, OpenSslDeleter<GENERAL_NAMES_free>>;
using Ia5StringPtr = std::unique_ptr<ASN1_IA5STRING, OpenSslDeleter<ASN1_IA5STRING_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY_free>>;
using OctetStringPtr = std::unique_ptr<ASN1_OCTET_STRING, OpenSslDeleter<ASN1_OCTET_STRING_free>>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, OpenSslDeleter<SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, OpenSslDeleter<SSL_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509_free>>;
using X509StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, OpenSslDeleter<X509_STORE_CTX_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, OpenSslDeleter<X509_STORE_free>>;

// A passphrase callback for PEM reads that never gives one: without a callback, OpenSSL would
// prompt on the terminal for an encrypted key. An encrypted key is an unreadable one here.
inline int NoPassphrase(char*, int, int, void*) { return 0; }

// OpenSSL's reason for the last failure (the newest entry of the thread's error queue, which
// names the actual cause; older entries are its context), and a clean queue for the next call.
inline std::string OpenSslReason() {
  const unsigned long code = ERR_peek_last_error();
  std::string reason = "unknown OpenSSL error";
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    reason = buf;
  }
  ERR_clear_error();
  return reason;
}

}  // namespace kt::server::internal
