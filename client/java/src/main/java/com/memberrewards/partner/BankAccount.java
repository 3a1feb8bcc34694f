package com.memberrewards.partner;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** A UK bank account: accountNumber exactly 8 digits, sortCode exactly 6 digits (no dashes), holder name. */
public record BankAccount(String accountNumber, String sortCode, String name) {
  public BankAccount {
    Objects.requireNonNull(accountNumber, "accountNumber");
    Objects.requireNonNull(sortCode, "sortCode");
    Objects.requireNonNull(name, "name");
  }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("accountNumber", accountNumber);
    m.put("sortCode", sortCode);
    m.put("name", name);
    return m;
  }

  /** Named steps: {@code BankAccount.builder().accountNumber("12345678").sortCode("112233").name("Ada Lovelace").build()}. */
  public static Builder builder() {
    return new Builder();
  }

  /** Fluent construction; {@link #build()} checks every field is set. */
  public static final class Builder {
    private String accountNumber, sortCode, name;

    public Builder accountNumber(String v) { accountNumber = v; return this; }
    public Builder sortCode(String v) { sortCode = v; return this; }
    public Builder name(String v) { name = v; return this; }

    public BankAccount build() {
      return new BankAccount(accountNumber, sortCode, name);
    }
  }
}
