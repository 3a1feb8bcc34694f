package com.memberrewards.partner;

import java.util.List;

/** A page of events, oldest first; keep nextAfter to page on later (it may be null). */
public record EventPage(List<Event> entries, String nextAfter) {
  static EventPage from(JsonObject o) {
    return new EventPage(o.getList("entries", Event::from), o.optString("nextAfter"));
  }
}
