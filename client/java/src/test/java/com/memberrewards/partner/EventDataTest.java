package com.memberrewards.partner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Each event type's data becomes its record (the API reference's "Events" table). */
class EventDataTest {
  static final String BALANCES = "\"balances\":{\"pointsBalance\":173,\"reservedPointsBalance\":5}";
  static final Balances PARSED_BALANCES = new Balances(173, 5);

  static Event event(String type, String data) {
    return Event.from(Json.parseObject("{\"id\":\"evt_1\",\"type\":\"" + type + "\",\"createdAt\":\"2026-11-26T10:00:00.123Z\","
        + "\"environment\":\"sandbox\",\"data\":{\"externalMemberId\":\"m-1\",\"memberSequence\":3," + data + "}}"));
  }

  @Test
  void memberCreatedAndUpdated() {
    for (String type : new String[] {Event.MEMBER_CREATED, Event.MEMBER_UPDATED}) {
      Event e = event(type, "\"status\":\"active\",\"payoutReady\":true");
      assertEquals(new EventData.MemberChanged("m-1", 3, "active", true), e.data());
      assertEquals("m-1", e.externalMemberId());
      assertEquals(3, e.memberSequence());
    }
  }

  @Test
  void memberClosed() {
    Event e = event(Event.MEMBER_CLOSED, "\"closedAt\":\"2026-11-26T11:00:00.000Z\",\"pointsForfeited\":40," + BALANCES);
    assertEquals(new EventData.MemberClosed("m-1", 3, Instant.parse("2026-11-26T11:00:00Z"), 40, PARSED_BALANCES),
        e.data());
  }

  @Test
  void transactionSettledAndReversed() {
    Event s = event(Event.TRANSACTION_SETTLED, "\"eventId\":\"ev-42\",\"externalTransactionId\":\"tx-42\",\"pointsAwarded\":2,"
        + BALANCES + ",\"ledgerGroupId\":\"settled:7:tx-42\"");
    assertEquals(new EventData.TransactionSettled("m-1", 3, "ev-42", "tx-42", 2, PARSED_BALANCES, "settled:7:tx-42"),
        s.data());
    Event r = event(Event.TRANSACTION_REVERSED, "\"eventId\":\"ev-43\",\"externalTransactionId\":\"tx-42\",\"pointsReversed\":1,"
        + BALANCES + ",\"ledgerGroupId\":\"reversed:7:tx-42\"");
    assertEquals(new EventData.TransactionReversed("m-1", 3, "ev-43", "tx-42", 1, PARSED_BALANCES, "reversed:7:tx-42"),
        r.data());
    assertThrows(IllegalStateException.class, r::redemption);
  }

  @Test
  void redemptionEventsCarryTheRedemption() {
    for (String type : new String[] {Event.REDEMPTION_CREATED, Event.REDEMPTION_COMPLETED, Event.REDEMPTION_FAILED}) {
      Event e = event(type, "\"redemptionId\":\"rdm_1\",\"requestId\":\"rq-1\",\"status\":\"failed\","
          + "\"pointsRedeemed\":100,\"cashValueMinor\":100,\"currency\":\"GBP\","
          + "\"payout\":{\"payoutId\":\"po_1\",\"status\":\"failed\",\"failureReason\":\"account closed\"},"
          + "\"createdAt\":\"2026-11-26T10:00:00.000Z\",\"updatedAt\":\"2026-11-26T10:00:01.000Z\"," + BALANCES);
      EventData.RedemptionChanged r = assertInstanceOf(EventData.RedemptionChanged.class, e.data());
      assertEquals("rdm_1", r.redemption().redemptionId());
      assertEquals("account closed", r.redemption().payout().failureReason());
      assertEquals(PARSED_BALANCES, r.balances());
      assertEquals(r.redemption(), e.redemption());
    }
  }

  @Test
  void pointsAdjusted() {
    Event e = event(Event.POINTS_ADJUSTED, "\"pointsDelta\":-7,\"reason\":\"goodwill\"," + BALANCES);
    assertEquals(new EventData.PointsAdjusted("m-1", 3, -7, "goodwill", PARSED_BALANCES), e.data());
  }

  @Test
  void aTypeNewerThanTheSdkKeepsItsFields() {
    Event e = event("member.renamed", "\"nickname\":\"ada\"");
    EventData.Other o = assertInstanceOf(EventData.Other.class, e.data());
    assertEquals("ada", o.json().getString("nickname"));
    assertEquals(3, o.memberSequence());
  }

  @Test
  void aDataWithoutItsFieldsIsRefused() {
    assertThrows(JsonException.class, () -> event(Event.TRANSACTION_SETTLED, "\"eventId\":\"ev-42\""));
  }
}
