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

  /**
   * Named steps: {@code Wallet.builder().provider("bank").walletRef("w-1").status("active")
   * .bankAccount("12345678", "112233", "Ada Lovelace").build()}; every step is optional.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Fluent construction; a step left out is a field left out of the request. */
  public static final class Builder {
    private String provider, walletRef, status;
    private BankAccount bankAccount;

    public Builder provider(String v) { provider = v; return this; }
    public Builder walletRef(String v) { walletRef = v; return this; }
    public Builder status(String v) { status = v; return this; }
    public Builder bankAccount(BankAccount v) { bankAccount = v; return this; }
    public Builder bankAccount(String accountNumber, String sortCode, String name) {
      bankAccount = new BankAccount(accountNumber, sortCode, name);
      return this;
    }

    public Wallet build() {
      return new Wallet(provider, walletRef, status, bankAccount);
    }
  }
}
