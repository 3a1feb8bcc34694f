#include "modules/webhooks/attempt_error.hpp"

namespace mr::webhooks {

std::string attempt_error_for_status(long status) { return "HTTP " + std::to_string(status); }

std::string_view attempt_error_for(CURLcode code) {
  switch (code) {
    case CURLE_OK:
      return "";
    case CURLE_OPERATION_TIMEDOUT:
      return "timed out";
    case CURLE_COULDNT_RESOLVE_HOST:
      return "the host name did not resolve";
    case CURLE_COULDNT_CONNECT:
      return "the connection was refused";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
      return "TLS failed";
    case CURLE_UNSUPPORTED_PROTOCOL:
      return "refused: the URL's scheme is not allowed";
    case CURLE_URL_MALFORMAT:
      return "refused: malformed URL";
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return "the connection broke before an answer";
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return "the answer was not HTTP";
    default:
      return "the connection failed";
  }
}

}  // namespace mr::webhooks
