package com.memberrewards.partner;

import java.util.LinkedHashMap;
import java.util.Map;

/** A UK bank account: accountNumber exactly 8 digits, sortCode exactly 6 digits (no dashes), holder name. */
public record BankAccount(String accountNumber, String sortCode, String name) {
  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("accountNumber", accountNumber);
    m.put("sortCode", sortCode);
    m.put("name", name);
    return m;
  }
}
