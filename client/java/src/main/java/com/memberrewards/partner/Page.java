package com.memberrewards.partner;

import java.util.List;
import java.util.function.Function;

/** One page of a newest-first list; nextBefore is null on the last page. */
public record Page<T>(List<T> entries, Long nextBefore) {
  public boolean hasMore() {
    return nextBefore != null;
  }

  static <T> Page<T> from(JsonObject o, Function<JsonObject, T> convert) {
    return new Page<>(o.getList("entries", convert), o.optLong("nextBefore"));
  }
}
