package com.memberrewards.partner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Every request builder makes the request its constructor makes, and refuses a missing required field. */
class BuildersTest {
  static final Instant T = Instant.parse("2026-11-26T10:00:00.123Z");

  @Test
  void memberWithWalletAndBankAccount() {
    Member built = Member.builder().externalMemberId("m-1").name("Ada", "Lovelace").email("ada@example.com")
        .wallet(Wallet.builder().provider("bank").walletRef("w-1").status("active")
            .bankAccount("12345678", "112233", "Ada Lovelace").build())
        .build();
    Member made = new Member("m-1", "Ada", "Lovelace", "ada@example.com",
        new Wallet("bank", "w-1", "active", new BankAccount("12345678", "112233", "Ada Lovelace")));
    assertEquals(made, built);
    assertEquals("{\"externalMemberId\":\"m-1\",\"firstName\":\"Ada\",\"lastName\":\"Lovelace\","
        + "\"email\":\"ada@example.com\",\"wallet\":{\"provider\":\"bank\",\"walletRef\":\"w-1\",\"status\":\"active\","
        + "\"bankAccount\":{\"accountNumber\":\"12345678\",\"sortCode\":\"112233\",\"name\":\"Ada Lovelace\"}}}",
        Json.write(built.toJson()));
  }

  @Test
  void memberWithoutWalletLeavesItOut() {
    Member m = Member.builder().externalMemberId("m-1").firstName("Ada").lastName("Lovelace").email("a@example.com")
        .build();
    assertEquals(new Member("m-1", "Ada", "Lovelace", "a@example.com"), m);
    assertEquals(false, m.toJson().containsKey("wallet"));
  }

  @Test
  void walletStepsAreOptional() {
    assertEquals("{\"status\":\"suspended\"}", Json.write(Wallet.builder().status("suspended").build().toJson()));
    assertEquals(new BankAccount("12345678", "112233", "A"),
        BankAccount.builder().accountNumber("12345678").sortCode("112233").name("A").build());
  }

  @Test
  void reversalWithAndWithoutAmount() {
    ReversedRequest part = ReversedRequest.builder().eventId("ev-2").occurredAt(T).externalMemberId("m-1")
        .externalTransactionId("tx-1").amountMinor(500).currency("GBP").reason("partial refund").build();
    assertEquals(new ReversedRequest("ev-2", T, "m-1", "tx-1", 500L, "GBP", "partial refund"), part);
    ReversedRequest all = ReversedRequest.builder().eventId("ev-3").occurredAt(T).externalMemberId("m-1")
        .externalTransactionId("tx-1").currency("GBP").build();
    assertEquals(new ReversedRequest("ev-3", T, "m-1", "tx-1", null, "GBP", null), all);
    assertEquals("{\"eventId\":\"ev-3\",\"occurredAt\":\"2026-11-26T10:00:00.123Z\","
        + "\"member\":{\"externalMemberId\":\"m-1\"},\"transaction\":{\"externalTransactionId\":\"tx-1\",\"currency\":\"GBP\"}}",
        Json.write(all.toJson()));
  }

  @Test
  void redemption() {
    RedemptionRequest r = RedemptionRequest.builder().requestId("rq-1").externalMemberId("m-1").points(100)
        .currency("GBP").build();
    assertEquals(new RedemptionRequest("rq-1", "m-1", 100, "GBP"), r);
  }

  @Test
  void aMissingRequiredFieldIsRefusedByName() {
    assertEquals("email", assertThrows(NullPointerException.class,
        () -> Member.builder().externalMemberId("m-1").name("Ada", "Lovelace").build()).getMessage());
    assertEquals("sortCode", assertThrows(NullPointerException.class,
        () -> BankAccount.builder().accountNumber("12345678").name("A").build()).getMessage());
    assertEquals("currency", assertThrows(NullPointerException.class,
        () -> ReversedRequest.builder().eventId("e").occurredAt(T).externalMemberId("m").externalTransactionId("t")
            .build()).getMessage());
    assertEquals("points", assertThrows(NullPointerException.class,
        () -> RedemptionRequest.builder().requestId("rq-1").externalMemberId("m-1").currency("GBP").build())
        .getMessage());
  }
}
