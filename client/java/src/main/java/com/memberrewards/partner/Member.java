package com.memberrewards.partner;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** The member of {@code POST /members}. Without a wallet, an update keeps the stored one. */
public record Member(String externalMemberId, String firstName, String lastName, String email, Wallet wallet) {
  public Member {
    Objects.requireNonNull(externalMemberId, "externalMemberId");
    Objects.requireNonNull(firstName, "firstName");
    Objects.requireNonNull(lastName, "lastName");
    Objects.requireNonNull(email, "email");
  }

  public Member(String externalMemberId, String firstName, String lastName, String email) {
    this(externalMemberId, firstName, lastName, email, null);
  }

  /** The same member with this wallet. */
  public Member withWallet(Wallet newWallet) {
    return new Member(externalMemberId, firstName, lastName, email, newWallet);
  }

  Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("externalMemberId", externalMemberId);
    m.put("firstName", firstName);
    m.put("lastName", lastName);
    m.put("email", email);
    if (wallet != null) m.put("wallet", wallet.toJson());
    return m;
  }

  /**
   * Named steps: {@code Member.builder().externalMemberId(id).name("Ada", "Lovelace")
   * .email("ada@example.com").wallet(wallet).build()}; the wallet may be left out.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Fluent construction; {@link #build()} checks every required field is set. */
  public static final class Builder {
    private String externalMemberId, firstName, lastName, email;
    private Wallet wallet;

    public Builder externalMemberId(String v) { externalMemberId = v; return this; }
    public Builder name(String first, String last) { firstName = first; lastName = last; return this; }
    public Builder firstName(String v) { firstName = v; return this; }
    public Builder lastName(String v) { lastName = v; return this; }
    public Builder email(String v) { email = v; return this; }
    public Builder wallet(Wallet v) { wallet = v; return this; }

    public Member build() {
      return new Member(externalMemberId, firstName, lastName, email, wallet);
    }
  }
}
