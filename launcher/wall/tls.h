// The wall's TLS (OpenSSL 3) for inject mode: the session CA, its leaves, and both legs' contexts.
// The CA's key lives in this object only (never written, never exported); the certificate
// (public) goes into the container at /sandbox/ca/session-ca.pem. The CA is name-constrained to
// the session's inject and refresh hosts, and a leaf is issued only for one of those hosts.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct x509_st X509;

namespace asbx {

class SessionCa {
 public:
  // EC P-256 key, CA:TRUE critical, pathlen:0, keyCertSign, name constraints = hosts;
  // notBefore −1 h (clock skew), notAfter now + lifetime_s. Throws Error(egress_unavailable).
  SessionCa(std::vector<std::string> hosts, std::int64_t lifetime_s);
  ~SessionCa();
  SessionCa(const SessionCa&) = delete;
  SessionCa& operator=(const SessionCa&) = delete;
  const std::string& cert_pem() const { return pem_; }
  // A server context presenting a leaf for `host` (minted once, then cached). nullptr when the
  // host is not one of the CA's hosts: no leaf is ever made for another name.
  SSL_CTX* server_for(const std::string& host);
  int leaves_issued() const;

 private:
  std::vector<std::string> hosts_;
  std::int64_t lifetime_s_;
  EVP_PKEY* key_ = nullptr;
  X509* cert_ = nullptr;
  std::string pem_;
  mutable std::mutex mutex_;
  std::map<std::string, SSL_CTX*> servers_;
};

// The upstream leg's context: TLS 1.2+, peer verified against the system store plus `extra_ca`
// (a PEM file, "" for none), ALPN http/1.1. Throws Error(egress_unavailable).
SSL_CTX* make_upstream_context(const std::string& extra_ca);
void free_context(SSL_CTX* ctx);
// The last OpenSSL errors as one line (emptied).
std::string tls_errors();

}  // namespace asbx
