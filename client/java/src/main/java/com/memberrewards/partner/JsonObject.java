package com.memberrewards.partner;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * A parsed JSON object with typed getters. A getter for a missing member, or
 * for one of another type, throws {@link JsonException}; the {@code opt}
 * getters return null for a missing member or a JSON null.
 */
public final class JsonObject {
  private final Map<String, Object> map;

  private JsonObject(Map<String, Object> map) {
    this.map = map;
  }

  /** Wraps a value the reader returned for an object. */
  @SuppressWarnings("unchecked")
  static JsonObject of(Object value) {
    if (!(value instanceof Map)) throw shape("expected a JSON object");
    return new JsonObject(Collections.unmodifiableMap((Map<String, Object>) value));
  }

  private static JsonException shape(String message) {
    return new JsonException(message, -1);
  }

  public Map<String, Object> asMap() {
    return map;
  }

  public Set<String> keys() {
    return map.keySet();
  }

  public boolean has(String name) {
    return map.containsKey(name);
  }

  public boolean isNull(String name) {
    return map.containsKey(name) && map.get(name) == null;
  }

  /** The raw value: Map, List, String, Long, BigInteger, BigDecimal, Boolean or null. */
  public Object get(String name) {
    return map.get(name);
  }

  private Object required(String name) {
    if (!map.containsKey(name)) throw shape("missing \"" + name + "\"");
    Object v = map.get(name);
    if (v == null) throw shape("\"" + name + "\" is null");
    return v;
  }

  public String getString(String name) {
    Object v = required(name);
    if (!(v instanceof String)) throw shape("\"" + name + "\" is not a string");
    return (String) v;
  }

  public String optString(String name) {
    return map.get(name) == null ? null : getString(name);
  }

  public long getLong(String name) {
    Object v = required(name);
    if (!(v instanceof Long)) throw shape("\"" + name + "\" is not an integer within 64 bits");
    return (Long) v;
  }

  public Long optLong(String name) {
    return map.get(name) == null ? null : getLong(name);
  }

  public int getInt(String name) {
    long v = getLong(name);
    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) throw shape("\"" + name + "\" does not fit an int");
    return (int) v;
  }

  public Integer optInt(String name) {
    return map.get(name) == null ? null : getInt(name);
  }

  /** Any JSON number, exactly. */
  public BigDecimal getDecimal(String name) {
    Object v = required(name);
    if (v instanceof Long) return BigDecimal.valueOf((Long) v);
    if (v instanceof BigInteger) return new BigDecimal((BigInteger) v);
    if (v instanceof BigDecimal) return (BigDecimal) v;
    throw shape("\"" + name + "\" is not a number");
  }

  public boolean getBoolean(String name) {
    Object v = required(name);
    if (!(v instanceof Boolean)) throw shape("\"" + name + "\" is not a boolean");
    return (Boolean) v;
  }

  /** An RFC 3339 timestamp member. */
  public Instant getInstant(String name) {
    String text = getString(name);
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      try {
        return java.time.OffsetDateTime.parse(text).toInstant();
      } catch (DateTimeParseException e2) {
        throw shape("\"" + name + "\" is not an RFC 3339 timestamp");
      }
    }
  }

  public Instant optInstant(String name) {
    return map.get(name) == null ? null : getInstant(name);
  }

  public JsonObject getObject(String name) {
    Object v = required(name);
    if (!(v instanceof Map)) throw shape("\"" + name + "\" is not an object");
    return of(v);
  }

  public JsonObject optObject(String name) {
    return map.get(name) == null ? null : getObject(name);
  }

  public List<Object> getList(String name) {
    Object v = required(name);
    if (!(v instanceof List)) throw shape("\"" + name + "\" is not an array");
    @SuppressWarnings("unchecked")
    List<Object> list = (List<Object>) v;
    return list;
  }

  /** An array of objects, each converted. */
  public <T> List<T> getList(String name, Function<JsonObject, T> convert) {
    List<T> out = new ArrayList<>();
    for (Object item : getList(name)) out.add(convert.apply(of(item)));
    return Collections.unmodifiableList(out);
  }

  /** An array of strings. */
  public List<String> getStrings(String name) {
    List<String> out = new ArrayList<>();
    for (Object item : getList(name)) {
      if (!(item instanceof String)) throw shape("\"" + name + "\" holds a non-string");
      out.add((String) item);
    }
    return Collections.unmodifiableList(out);
  }

  public List<String> optStrings(String name) {
    return map.get(name) == null ? null : getStrings(name);
  }

  @Override
  public String toString() {
    return Json.write(map);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof JsonObject && ((JsonObject) o).map.equals(map);
  }

  @Override
  public int hashCode() {
    return map.hashCode();
  }
}
