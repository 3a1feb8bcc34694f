package com.memberrewards.partner;

/** Text that is not strict JSON, or JSON without the expected shape. */
public final class JsonException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int offset;

  public JsonException(String message, int offset) {
    super(offset >= 0 ? message + " at offset " + offset : message);
    this.offset = offset;
  }

  /** Character offset of the problem in the text, or -1 when it is about shape, not syntax. */
  public int offset() {
    return offset;
  }
}
