package com.memberrewards.partner;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict RFC 8259 JSON reader and writer, so the SDK needs no dependency.
 *
 * <p>Values map to Java as: object {@code Map<String, Object>} (insertion
 * ordered, unmodifiable), array {@code List<Object>} (unmodifiable), string
 * {@link String}, number {@link Long} when it is an integer that fits, else
 * {@link BigInteger} for a larger integer and {@link BigDecimal} for one with a
 * fraction or exponent (never a lossy double), {@link Boolean}, and
 * {@code null}.
 *
 * <p>The reader refuses everything RFC 8259 does not allow (comments, trailing
 * commas, single quotes, leading zeros, {@code NaN}, control characters in
 * strings, bytes after the value, invalid UTF-8) and, beyond the RFC, a name
 * repeated in one object (its meaning would be ambiguous) and nesting deeper
 * than {@value #MAX_DEPTH}.
 */
public final class Json {
  /** Deepest nesting the reader accepts. */
  public static final int MAX_DEPTH = 512;

  private Json() {}

  /** Parses UTF-8 bytes; malformed UTF-8 is an error, a leading BOM too (RFC 8259 section 8.1). */
  public static Object parse(byte[] utf8) {
    final String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(utf8))
          .toString();
    } catch (CharacterCodingException e) {
      throw new JsonException("invalid UTF-8", 0);
    }
    return parse(text);
  }

  /** Parses one JSON text. */
  public static Object parse(String text) {
    Reader r = new Reader(text);
    r.skipWhitespace();
    Object value = r.value(0);
    r.skipWhitespace();
    if (r.pos != text.length()) throw r.error("unexpected data after the JSON value");
    return value;
  }

  /** Parses a text whose top level must be an object. */
  public static JsonObject parseObject(String text) {
    Object v = parse(text);
    if (!(v instanceof Map)) throw new JsonException("expected a JSON object", 0);
    return JsonObject.of(v);
  }

  /**
   * Writes a value: Map (String keys), Iterable or array, CharSequence,
   * Number (integral types, BigInteger, BigDecimal; finite double and float),
   * Boolean, null, JsonObject, Enum (its name) and java.time values (their
   * ISO text). Anything else is an IllegalArgumentException.
   */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out, 0);
    return out.toString();
  }

  private static void write(Object v, StringBuilder out, int depth) {
    if (depth > MAX_DEPTH) throw new IllegalArgumentException("nesting deeper than " + MAX_DEPTH);
    if (v == null) {
      out.append("null");
    } else if (v instanceof JsonObject) {
      write(((JsonObject) v).asMap(), out, depth);
    } else if (v instanceof CharSequence || v instanceof Enum || v instanceof java.time.temporal.TemporalAccessor) {
      writeString(v.toString(), out);
    } else if (v instanceof Boolean) {
      out.append(v);
    } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
        || v instanceof BigInteger) {
      out.append(v);
    } else if (v instanceof BigDecimal) {
      out.append(((BigDecimal) v).toString());
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("JSON has no NaN or infinity");
      out.append(BigDecimal.valueOf(d).stripTrailingZeros().toString());
    } else if (v instanceof Map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!(e.getKey() instanceof String)) throw new IllegalArgumentException("object keys must be strings");
        if (!first) out.append(',');
        first = false;
        writeString((String) e.getKey(), out);
        out.append(':');
        write(e.getValue(), out, depth + 1);
      }
      out.append('}');
    } else if (v instanceof Iterable) {
      out.append('[');
      boolean first = true;
      for (Object item : (Iterable<?>) v) {
        if (!first) out.append(',');
        first = false;
        write(item, out, depth + 1);
      }
      out.append(']');
    } else if (v instanceof Object[]) {
      write(java.util.Arrays.asList((Object[]) v), out, depth);
    } else {
      throw new IllegalArgumentException("cannot write " + v.getClass().getName() + " as JSON");
    }
  }

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /** A JSON string: quotes, backslash and control characters escaped, a lone surrogate as \\uXXXX. */
  static void writeString(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        default:
          boolean loneSurrogate = Character.isSurrogate(c)
              && !(Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1)))
              && !(Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1)));
          if (c < 0x20 || loneSurrogate) {
            out.append("\\u").append(HEX[c >> 12 & 0xF]).append(HEX[c >> 8 & 0xF])
                .append(HEX[c >> 4 & 0xF]).append(HEX[c & 0xF]);
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }

  private static final class Reader {
    final String s;
    int pos;

    Reader(String s) {
      this.s = s;
    }

    JsonException error(String what) {
      return new JsonException(what, pos);
    }

    void skipWhitespace() {
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        pos++;
      }
    }

    Object value(int depth) {
      if (depth > MAX_DEPTH) throw error("nesting deeper than " + MAX_DEPTH);
      if (pos >= s.length()) throw error("unexpected end of input");
      char c = s.charAt(pos);
      switch (c) {
        case '{': return object(depth);
        case '[': return array(depth);
        case '"': return string();
        case 't': return literal("true", Boolean.TRUE);
        case 'f': return literal("false", Boolean.FALSE);
        case 'n': return literal("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw error("unexpected character '" + c + "'");
      }
    }

    Object literal(String word, Object value) {
      if (!s.startsWith(word, pos)) throw error("invalid literal");
      pos += word.length();
      return value;
    }

    Map<String, Object> object(int depth) {
      pos++; // {
      Map<String, Object> map = new LinkedHashMap<>();
      skipWhitespace();
      if (pos < s.length() && s.charAt(pos) == '}') {
        pos++;
        return Collections.unmodifiableMap(map);
      }
      for (;;) {
        skipWhitespace();
        if (pos >= s.length() || s.charAt(pos) != '"') throw error("expected a string as object key");
        int keyAt = pos;
        String key = string();
        skipWhitespace();
        if (pos >= s.length() || s.charAt(pos) != ':') throw error("expected ':'");
        pos++;
        skipWhitespace();
        Object v = value(depth + 1);
        if (map.containsKey(key)) throw new JsonException("duplicate key \"" + key + "\"", keyAt);
        map.put(key, v);
        skipWhitespace();
        if (pos >= s.length()) throw error("unexpected end of input in object");
        char c = s.charAt(pos++);
        if (c == '}') return Collections.unmodifiableMap(map);
        if (c != ',') throw new JsonException("expected ',' or '}'", pos - 1);
      }
    }

    List<Object> array(int depth) {
      pos++; // [
      List<Object> list = new ArrayList<>();
      skipWhitespace();
      if (pos < s.length() && s.charAt(pos) == ']') {
        pos++;
        return Collections.unmodifiableList(list);
      }
      for (;;) {
        skipWhitespace();
        list.add(value(depth + 1));
        skipWhitespace();
        if (pos >= s.length()) throw error("unexpected end of input in array");
        char c = s.charAt(pos++);
        if (c == ']') return Collections.unmodifiableList(list);
        if (c != ',') throw new JsonException("expected ',' or ']'", pos - 1);
      }
    }

    String string() {
      pos++; // opening quote
      StringBuilder out = new StringBuilder();
      for (;;) {
        if (pos >= s.length()) throw error("unterminated string");
        char c = s.charAt(pos++);
        if (c == '"') return out.toString();
        if (c < 0x20) throw new JsonException("control character in string", pos - 1);
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (pos >= s.length()) throw error("unterminated escape");
        char e = s.charAt(pos++);
        switch (e) {
          case '"': out.append('"'); break;
          case '\\': out.append('\\'); break;
          case '/': out.append('/'); break;
          case 'b': out.append('\b'); break;
          case 'f': out.append('\f'); break;
          case 'n': out.append('\n'); break;
          case 'r': out.append('\r'); break;
          case 't': out.append('\t'); break;
          case 'u': {
            if (pos + 4 > s.length()) throw error("short \\u escape");
            int code = 0;
            for (int i = 0; i < 4; i++) {
              int d = Character.digit(s.charAt(pos + i), 16);
              if (d < 0) throw new JsonException("invalid \\u escape", pos + i);
              code = code * 16 + d;
            }
            pos += 4;
            out.append((char) code);
            break;
          }
          default:
            throw new JsonException("invalid escape \\" + e, pos - 1);
        }
      }
    }

    Object number() {
      int start = pos;
      if (s.charAt(pos) == '-') pos++;
      if (pos >= s.length()) throw error("incomplete number");
      char c = s.charAt(pos);
      if (c == '0') {
        pos++;
        if (pos < s.length() && isDigit(s.charAt(pos))) throw error("leading zero in number");
      } else if (c >= '1' && c <= '9') {
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      } else {
        throw error("invalid number");
      }
      boolean integral = true;
      if (pos < s.length() && s.charAt(pos) == '.') {
        integral = false;
        pos++;
        if (pos >= s.length() || !isDigit(s.charAt(pos))) throw error("digit expected after '.'");
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      }
      if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
        integral = false;
        pos++;
        if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) pos++;
        if (pos >= s.length() || !isDigit(s.charAt(pos))) throw error("digit expected in exponent");
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      }
      String text = s.substring(start, pos);
      if (!integral) {
        try {
          return new BigDecimal(text);
        } catch (NumberFormatException e) {
          throw new JsonException("number out of range", start);
        }
      }
      if (text.length() <= 18) return Long.parseLong(text);
      BigInteger big = new BigInteger(text);
      return big.bitLength() < 64 ? (Object) big.longValue() : big;
    }

    static boolean isDigit(char c) {
      return c >= '0' && c <= '9';
    }
  }
}
