package com.memberrewards.partner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {
  @Test
  void parsesEveryKindOfValue() {
    Object v = Json.parse(" {\"a\": [1, -2, 3.5, 1e3, true, false, null, \"x\"], \"b\": {}, \"c\": []}\n");
    Map<?, ?> m = (Map<?, ?>) v;
    assertEquals(List.of("a", "b", "c"), List.copyOf(m.keySet()));
    List<?> a = (List<?>) m.get("a");
    assertEquals(1L, a.get(0));
    assertEquals(-2L, a.get(1));
    assertEquals(new BigDecimal("3.5"), a.get(2));
    assertEquals(new BigDecimal("1e3"), a.get(3));
    assertEquals(Boolean.TRUE, a.get(4));
    assertEquals(Boolean.FALSE, a.get(5));
    assertNull(a.get(6));
    assertEquals("x", a.get(7));
    assertEquals(Map.of(), m.get("b"));
    assertEquals(List.of(), m.get("c"));
  }

  @Test
  void integersStayExact() {
    assertEquals(Long.MAX_VALUE, Json.parse("9223372036854775807"));
    assertEquals(Long.MIN_VALUE, Json.parse("-9223372036854775808"));
    assertEquals(new BigInteger("9223372036854775808"), Json.parse("9223372036854775808"));
    assertEquals(1000000000000L, Json.parse("1000000000000"));
    assertEquals(0L, Json.parse("-0"));
    assertEquals(new BigDecimal("0.1"), Json.parse("0.1"));
  }

  @Test
  void decodesEscapesAndSurrogatePairs() {
    assertEquals("\"\\/\b\f\n\r\t", Json.parse("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""));
    assertEquals("é☕😀", Json.parse("\"\\u00e9\\u2615\\ud83d\\ude00\""));
    assertEquals("é☕😀", Json.parse("\"é☕😀\""));
    assertEquals("é", Json.parse("\"é\"".getBytes(StandardCharsets.UTF_8)));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "", " ", "{", "}", "[1,]", "[,1]", "{\"a\":1,}", "{a:1}", "{'a':1}", "{\"a\" 1}", "[1 2]",
      "01", "-", "-01", "1.", ".5", "+1", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity",
      "tru", "nul", "True", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"a\u0001b\"", "\"tab\there\"",
      "1 2", "{} x", "[1] [2]", "/* c */ 1", "1 // c", "{\"a\":1,\"a\":2}", "\u00a01", "\ufeff1", "1e99999999999"
  })
  void refusesWhatRfc8259DoesNot(String text) {
    assertThrows(JsonException.class, () -> Json.parse(text), text);
  }

  @Test
  void refusesInvalidUtf8() {
    assertThrows(JsonException.class, () -> Json.parse(new byte[] {'"', (byte) 0xC3, '"'}));
    assertThrows(JsonException.class, () -> Json.parse(new byte[] {'"', (byte) 0xFF, '"'}));
    assertThrows(JsonException.class, () -> Json.parse(new byte[] {'"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"'}));
  }

  @Test
  void limitsNestingDepth() {
    char[] open = new char[Json.MAX_DEPTH + 2];
    char[] close = new char[Json.MAX_DEPTH + 2];
    Arrays.fill(open, '[');
    Arrays.fill(close, ']');
    assertThrows(JsonException.class, () -> Json.parse(new String(open) + new String(close)));
    String ok = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
    assertTrue(Json.parse(ok) instanceof List);
  }

  @Test
  void writesEscapedCompactJsonInInsertionOrder() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("z", "a\"b\\c\nd\u0001é😀");
    m.put("a", List.of(1, 2L, new BigInteger("123456789012345678901234567890"), new BigDecimal("1.50")));
    m.put("n", null);
    m.put("t", true);
    m.put("o", Map.of());
    assertEquals("{\"z\":\"a\\\"b\\\\c\\nd\\u0001é😀\",\"a\":[1,2,123456789012345678901234567890,1.50],"
        + "\"n\":null,\"t\":true,\"o\":{}}", Json.write(m));
  }

  @Test
  void writesLoneSurrogatesAsEscapes() {
    assertEquals("\"\\ud800x\"", Json.write("\ud800x"));
    assertEquals("\"x\\udc00\"", Json.write("x\udc00"));
  }

  @Test
  void refusesValuesJsonCannotHold() {
    assertThrows(IllegalArgumentException.class, () -> Json.write(Double.NaN));
    assertThrows(IllegalArgumentException.class, () -> Json.write(new Object()));
    assertThrows(IllegalArgumentException.class, () -> Json.write(Map.of(1, 2)));
  }

  @Test
  void roundTripsWhatItWrites() {
    String text = "{\"a\":[1,-2,3.25,\"x\\u0000y\",{\"b\":null}],\"c\":\"\u2028é\",\"d\":false}";
    assertEquals(text, Json.write(Json.parse(text)));
    Object v = Json.parse(text);
    assertEquals(v, Json.parse(Json.write(v)));
  }

  @Test
  void jsonObjectGettersCheckTypes() {
    JsonObject o = Json.parseObject("{\"s\":\"x\",\"n\":5,\"big\":12345678901234567890,\"f\":1.5,\"b\":true,"
        + "\"nul\":null,\"t\":\"2026-11-22T10:00:00.123Z\",\"o\":{\"k\":1},\"l\":[\"a\",\"b\"]}");
    assertEquals("x", o.getString("s"));
    assertEquals(5L, o.getLong("n"));
    assertEquals(5, o.getInt("n"));
    assertEquals(new BigDecimal("1.5"), o.getDecimal("f"));
    assertTrue(o.getBoolean("b"));
    assertNull(o.optString("nul"));
    assertNull(o.optLong("missing"));
    assertTrue(o.isNull("nul"));
    assertEquals(java.time.Instant.parse("2026-11-22T10:00:00.123Z"), o.getInstant("t"));
    assertEquals(1L, o.getObject("o").getLong("k"));
    assertEquals(List.of("a", "b"), o.getStrings("l"));
    assertThrows(JsonException.class, () -> o.getLong("s"));
    assertThrows(JsonException.class, () -> o.getLong("big"));
    assertThrows(JsonException.class, () -> o.getLong("f"));
    assertThrows(JsonException.class, () -> o.getString("missing"));
    assertThrows(JsonException.class, () -> o.getString("nul"));
    assertThrows(JsonException.class, () -> o.getInstant("s"));
    assertThrows(JsonException.class, () -> Json.parseObject("[1]"));
  }
}
