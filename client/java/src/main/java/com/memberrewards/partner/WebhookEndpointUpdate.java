package com.memberrewards.partner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The changes of {@code POST /webhook-endpoints/{id}}; null fields are left as they are. */
public record WebhookEndpointUpdate(String url, List<String> eventTypes, String description, String status) {
  public static WebhookEndpointUpdate none() {
    return new WebhookEndpointUpdate(null, null, null, null);
  }

  public WebhookEndpointUpdate withUrl(String v) { return new WebhookEndpointUpdate(v, eventTypes, description, status); }
  public WebhookEndpointUpdate withEventTypes(List<String> v) { return new WebhookEndpointUpdate(url, v, description, status); }
  public WebhookEndpointUpdate withDescription(String v) { return new WebhookEndpointUpdate(url, eventTypes, v, status); }
  /** "enabled" or "disabled"; re-enabling resumes what is still pending. */
  public WebhookEndpointUpdate withStatus(String v) { return new WebhookEndpointUpdate(url, eventTypes, description, v); }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    if (url != null) m.put("url", url);
    if (eventTypes != null) m.put("eventTypes", eventTypes);
    if (description != null) m.put("description", description);
    if (status != null) m.put("status", status);
    return m;
  }
}
