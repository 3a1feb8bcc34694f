package com.memberrewards.partner;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** A local HTTP server for the offline tests: records every request and lets each test script the answers. */
final class StubServer implements AutoCloseable {
  record Recorded(String method, String rawUri, Map<String, List<String>> headers, String body, long receivedAtMillis) {
    String header(String name) {
      for (Map.Entry<String, List<String>> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) return e.getValue().get(0);
      }
      return null;
    }

    String path() {
      int q = rawUri.indexOf('?');
      return q < 0 ? rawUri : rawUri.substring(0, q);
    }
  }

  /** Answers the request number {@code index} (0-based). */
  interface Handler {
    void handle(Recorded request, HttpExchange exchange, int index) throws IOException;
  }

  final List<Recorded> requests = new CopyOnWriteArrayList<>();
  private final HttpServer server;

  StubServer(Handler handler) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", exchange -> {
      byte[] body = exchange.getRequestBody().readAllBytes();
      Recorded r = new Recorded(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath()
          + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery()),
          Map.copyOf(exchange.getRequestHeaders()), new String(body, StandardCharsets.UTF_8), System.currentTimeMillis());
      int index;
      synchronized (requests) {
        requests.add(r);
        index = requests.size() - 1;
      }
      try {
        handler.handle(r, exchange, index);
      } finally {
        exchange.close();
      }
    });
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }

  static void json(HttpExchange ex, int status, String body, String... headerPairs) throws IOException {
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.getResponseHeaders().set("X-Request-Id", "req-" + status);
    for (int i = 0; i < headerPairs.length; i += 2) ex.getResponseHeaders().set(headerPairs[i], headerPairs[i + 1]);
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  static void ok(HttpExchange ex, int status, String dataJson) throws IOException {
    json(ex, status, "{\"ok\":true,\"data\":" + dataJson + "}");
  }

  static void fail(HttpExchange ex, int status, String code, String extraJson, String... headerPairs) throws IOException {
    json(ex, status, "{\"ok\":false,\"error\":{\"code\":\"" + code + "\",\"message\":\"" + code + " message\",\"requestId\":\"rid-"
        + code + "\"" + (extraJson.isEmpty() ? "" : "," + extraJson) + "}}", headerPairs);
  }

  /** The signature the server would expect, computed here independently of the SDK. */
  static String expectedSignature(String secret, Recorded r) throws Exception {
    String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(r.body().getBytes(StandardCharsets.UTF_8)));
    String canonical = r.header("X-MR-Timestamp") + "\n" + r.method() + "\n" + r.path() + "\n" + hash;
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return "v1=" + HexFormat.of().formatHex(mac.doFinal(canonical.getBytes(StandardCharsets.UTF_8)));
  }
}
