package com.memberrewards.partner;

import java.util.LinkedHashMap;
import java.util.Map;

/** A member's wallet; null fields are left out. A status of "suspended" or "closed" makes the member not payout-ready. */
public record Wallet(String provider, String walletRef, String status, BankAccount bankAccount) {
  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    if (provider != null) m.put("provider", provider);
    if (walletRef != null) m.put("walletRef", walletRef);
    if (status != null) m.put("status", status);
    if (bankAccount != null) m.put("bankAccount", bankAccount.toJson());
    return m;
  }
}
