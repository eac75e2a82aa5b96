import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Verifies a Site Services webhook delivery (signature v1). Java 17+. */
public final class Verify {
  static final double TOLERANCE_SECONDS = 300;

  /** Not genuine or not fresh: answer 401, do not process the event. */
  public static final class InvalidDelivery extends GeneralSecurityException {
    InvalidDelivery(String message) {
      super(message);
    }
  }

  /**
   * Returns if the delivery is genuine and fresh (only then parse rawBody as
   * JSON), else throws InvalidDelivery. secrets: the subscription's secret,
   * or several while you rotate (any one may match); headers: the request's
   * headers (names in any case); rawBody: the body's bytes as received.
   */
  public static void verify(List<String> secrets, Map<String, String> headers,
      byte[] rawBody) throws GeneralSecurityException {
    // An unset variable read as "" would let anyone sign: a setup error.
    for (String s : secrets) {
      if (s == null || s.codePointCount(0, s.length()) < 16) {
        throw new IllegalArgumentException("a secret has under 16 characters");
      }
    }
    // A header given twice is refused rather than picked from.
    Map<String, String> h = new HashMap<>();
    headers.forEach((name, value) ->
        h.merge(name.toLowerCase(Locale.ROOT), value, (first, again) -> ""));
    if (!"v1".equals(h.get("x-svc-signature-version"))) {
      throw new InvalidDelivery("x-svc-signature-version is not v1 (legacy?)");
    }
    if (!"hmac-sha256".equals(h.get("x-svc-signature-alg"))) {
      throw new InvalidDelivery("x-svc-signature-alg is not hmac-sha256");
    }
    String timestamp = h.getOrDefault("x-svc-timestamp", "");
    if (!timestamp.matches("0|[1-9][0-9]{0,15}")) {
      throw new InvalidDelivery("x-svc-timestamp is not decimal Unix seconds");
    }
    double now = System.currentTimeMillis() / 1000.0;
    if (Math.abs(now - Long.parseLong(timestamp)) > TOLERANCE_SECONDS) {
      throw new InvalidDelivery("stale: x-svc-timestamp is over 300 s away");
    }
    String signature = h.getOrDefault("x-svc-signature", "");
    if (!signature.matches("[0-9a-f]{64}")) {
      throw new InvalidDelivery("x-svc-signature is not lower-case hex");
    }
    byte[] given = signature.getBytes(StandardCharsets.US_ASCII);
    boolean matched = false;
    for (String s : secrets) { // all tried: the time taken does not say which
      Mac mac = Mac.getInstance("HmacSHA256");
      byte[] key = s.getBytes(StandardCharsets.UTF_8);
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
      String expected = HexFormat.of().formatHex(mac.doFinal(rawBody));
      byte[] digest = expected.getBytes(StandardCharsets.US_ASCII);
      matched = MessageDigest.isEqual(digest, given) || matched;
    }
    if (!matched) {
      throw new InvalidDelivery("x-svc-signature does not match");
    }
  }
}
