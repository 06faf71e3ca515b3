// The session CA of inject mode (launcher/wall/tls.h): leaves only for its own hosts, with what
// strict TLS stacks demand, verifiable against the CA the container is given, and no key in it.
#include <doctest/doctest.h>

#include <ctime>
#include <memory>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <string>

#include "launcher/wall/tls.h"

using namespace asbx;

namespace {

X509* parse_pem(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  return PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
}

bool san_names(X509* cert, const std::string& host) {
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  bool found = false;
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names); ++i) {
    GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type != GEN_DNS) continue;
    std::string dns(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)), ASN1_STRING_length(n->d.dNSName));
    found = found || dns == host;
  }
  GENERAL_NAMES_free(names);
  return found;
}

// Verifies `leaf` for `host` against `ca` alone (what the CLI inside does with the CA file).
int verify(X509* ca, X509* leaf, const std::string& host) {
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  X509_STORE_add_cert(store.get(), ca);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr);
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  return X509_verify_cert(ctx.get()) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx.get());
}

}  // namespace

TEST_CASE("session CA: leaves only for its hosts, cached, with SAN, serverAuth and both key ids") {
  SessionCa ca({"api.anthropic.com", "platform.claude.com"}, 600);
  CHECK(ca.cert_pem().find("PRIVATE KEY") == std::string::npos);
  CHECK(ca.server_for("evil.test") == nullptr);
  CHECK(ca.server_for("anthropic.com") == nullptr);
  CHECK(ca.server_for("x.api.anthropic.com") == nullptr);
  CHECK(ca.leaves_issued() == 0);  // nothing minted for a name not on the row
  SSL_CTX* ctx = ca.server_for("api.anthropic.com");
  REQUIRE(ctx != nullptr);
  CHECK(ca.server_for("api.anthropic.com") == ctx);
  CHECK(ca.leaves_issued() == 1);

  X509* leaf = SSL_CTX_get0_certificate(ctx);
  REQUIRE(leaf != nullptr);
  CHECK(san_names(leaf, "api.anthropic.com"));
  CHECK(!san_names(leaf, "platform.claude.com"));
  CHECK((X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER) != 0);
  CHECK((X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE) != 0);
  CHECK(X509_get0_subject_key_id(leaf) != nullptr);
  CHECK(X509_get0_authority_key_id(leaf) != nullptr);
  CHECK(EVP_PKEY_get_base_id(X509_get0_pubkey(leaf)) == EVP_PKEY_EC);
  std::time_t now = std::time(nullptr), hour_ago = now - 3500, later = now + 700;
  CHECK(X509_cmp_time(X509_get0_notBefore(leaf), &hour_ago) < 0);  // set back for skew
  CHECK(X509_cmp_time(X509_get0_notAfter(leaf), &later) < 0);      // no longer than the session

  std::unique_ptr<X509, decltype(&X509_free)> root(parse_pem(ca.cert_pem()), X509_free);
  REQUIRE(root != nullptr);
  CHECK(X509_check_ca(root.get()) == 1);
  int crit = -1;
  auto* bc = static_cast<BASIC_CONSTRAINTS*>(X509_get_ext_d2i(root.get(), NID_basic_constraints, &crit, nullptr));
  REQUIRE(bc != nullptr);
  CHECK(bc->ca != 0);
  CHECK(crit == 1);
  CHECK(ASN1_INTEGER_get(bc->pathlen) == 0);
  BASIC_CONSTRAINTS_free(bc);
  auto* nc = static_cast<NAME_CONSTRAINTS*>(X509_get_ext_d2i(root.get(), NID_name_constraints, &crit, nullptr));
  CHECK(nc != nullptr);
  NAME_CONSTRAINTS_free(nc);
  CHECK(X509_get0_subject_key_id(root.get()) != nullptr);

  CHECK(verify(root.get(), leaf, "api.anthropic.com") == X509_V_OK);
  CHECK(verify(root.get(), leaf, "evil.test") == X509_V_ERR_HOSTNAME_MISMATCH);
}

TEST_CASE("session CA: two sessions' CAs do not vouch for each other's leaves") {
  SessionCa a({"chatgpt.com"}, 600), b({"chatgpt.com"}, 600);
  std::unique_ptr<X509, decltype(&X509_free)> root_a(parse_pem(a.cert_pem()), X509_free);
  X509* leaf_b = SSL_CTX_get0_certificate(b.server_for("chatgpt.com"));
  REQUIRE(leaf_b != nullptr);
  CHECK(verify(root_a.get(), leaf_b, "chatgpt.com") != X509_V_OK);
}
