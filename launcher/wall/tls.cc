#include "launcher/wall/tls.h"

#include <algorithm>

#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/error.h"

namespace asbx {
namespace {

[[noreturn]] void tls_failed(const std::string& what) {
  throw Error(ErrorKind::egress_unavailable, "the wall's TLS: " + what + ": " + tls_errors());
}

EVP_PKEY* ec_key() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) tls_failed("cannot make an EC P-256 key");
  return key;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) tls_failed("extension " + std::string(OBJ_nid2sn(nid)) + " = " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate with a random serial, the validity window and the subject CN.
X509* new_cert(EVP_PKEY* key, const std::string& cn, std::int64_t lifetime_s) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), static_cast<long>(lifetime_s));
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("agent-sandbox session"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

std::string to_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

}  // namespace

std::string tls_errors() {
  std::string out;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "no OpenSSL detail" : out;
}

SessionCa::SessionCa(std::vector<std::string> hosts, std::int64_t lifetime_s)
    : hosts_(std::move(hosts)), lifetime_s_(lifetime_s) {
  key_ = ec_key();
  cert_ = new_cert(key_, "agent-sandbox session CA", lifetime_s_);
  X509_set_issuer_name(cert_, X509_get_subject_name(cert_));
  add_ext(cert_, cert_, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
  add_ext(cert_, cert_, NID_key_usage, "critical,keyCertSign,cRLSign");
  add_ext(cert_, cert_, NID_subject_key_identifier, "hash");
  std::string permitted = "critical";
  for (const auto& h : hosts_) permitted += ",permitted;DNS:" + h;
  add_ext(cert_, cert_, NID_name_constraints, permitted);
  if (!X509_sign(cert_, key_, EVP_sha256())) tls_failed("cannot sign the session CA");
  pem_ = to_pem(cert_);
}

SessionCa::~SessionCa() {
  for (auto& [host, ctx] : servers_) SSL_CTX_free(ctx);
  X509_free(cert_);
  EVP_PKEY_free(key_);  // OpenSSL clears the key material when it frees it
}

int SessionCa::leaves_issued() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(servers_.size());
}

SSL_CTX* SessionCa::server_for(const std::string& host) {
  std::lock_guard lock(mutex_);
  if (std::find(hosts_.begin(), hosts_.end(), host) == hosts_.end()) return nullptr;
  if (auto it = servers_.find(host); it != servers_.end()) return it->second;
  EVP_PKEY* key = ec_key();
  X509* leaf = new_cert(key, host, lifetime_s_);
  X509_set_issuer_name(leaf, X509_get_subject_name(cert_));
  add_ext(leaf, cert_, NID_basic_constraints, "critical,CA:FALSE");
  add_ext(leaf, cert_, NID_key_usage, "critical,digitalSignature");
  add_ext(leaf, cert_, NID_ext_key_usage, "serverAuth");
  add_ext(leaf, cert_, NID_subject_alt_name, "DNS:" + host);
  add_ext(leaf, cert_, NID_subject_key_identifier, "hash");
  add_ext(leaf, cert_, NID_authority_key_identifier, "keyid:always");
  if (!X509_sign(leaf, key_, EVP_sha256())) tls_failed("cannot sign a leaf for " + host);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  bool ok = SSL_CTX_use_certificate(ctx, leaf) == 1 && SSL_CTX_add1_chain_cert(ctx, cert_) == 1 &&
            SSL_CTX_use_PrivateKey(ctx, key) == 1;
  X509_free(leaf);
  EVP_PKEY_free(key);
  if (!ok) {
    SSL_CTX_free(ctx);
    tls_failed("cannot load the leaf for " + host);
  }
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // ALPN: http/1.1 only (codex would run its WebSocket over h2 otherwise); a client offering
  // no http/1.1 gets no ALPN answer and speaks HTTP/1.1 anyway, or fails.
  SSL_CTX_set_alpn_select_cb(
      ctx,
      [](SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen, void*) {
        static const unsigned char h11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
        unsigned char* selected = nullptr;
        if (SSL_select_next_proto(&selected, outlen, h11, sizeof h11, in, inlen) != OPENSSL_NPN_NEGOTIATED)
          return SSL_TLSEXT_ERR_NOACK;
        *out = selected;
        return SSL_TLSEXT_ERR_OK;
      },
      nullptr);
  servers_[host] = ctx;
  return ctx;
}

SSL_CTX* make_upstream_context(const std::string& extra_ca) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) tls_failed("cannot make the upstream context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_set_default_verify_paths(ctx) != 1) ERR_clear_error();
  if (!extra_ca.empty() && SSL_CTX_load_verify_locations(ctx, extra_ca.c_str(), nullptr) != 1) {
    SSL_CTX_free(ctx);
    tls_failed("cannot read the seat's upstream_ca '" + extra_ca + "'");
  }
  static const unsigned char h11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(ctx, h11, sizeof h11);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return ctx;
}

void free_context(SSL_CTX* ctx) { SSL_CTX_free(ctx); }

}  // namespace asbx
