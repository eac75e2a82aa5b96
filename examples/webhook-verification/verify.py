"""Verify a Site Services webhook delivery (signature v1) before using it.

Python 3, standard library only.
"""
import hashlib
import hmac
import json
import re
import time

TOLERANCE_SECONDS = 300


class InvalidDelivery(Exception):
    """Not genuine or not fresh: answer 401 and do not process the event."""


def verify(secret, headers, raw_body):
    """Return the parsed event, or raise InvalidDelivery.

    secret: the subscription's secret, or a list of secrets while you rotate
    (a delivery signed with any of them is accepted). headers: the request's
    headers, any mapping (names in any case). raw_body: the body's bytes
    exactly as received, never a re-serialised object.
    """
    secrets = [secret] if isinstance(secret, str) else list(secret)
    # An unset variable read as "" would let anyone sign: a setup error.
    if not all(isinstance(s, str) and len(s) >= 16 for s in secrets):
        raise ValueError("each secret must be at least 16 characters")
    h = {}
    for name, value in headers.items():
        # A header given twice is refused rather than picked from.
        h[name.lower()] = None if name.lower() in h else value
    if h.get("x-svc-signature-version") != "v1":
        raise InvalidDelivery("x-svc-signature-version is not v1 (legacy?)")
    if h.get("x-svc-signature-alg") != "hmac-sha256":
        raise InvalidDelivery("x-svc-signature-alg is not hmac-sha256")
    timestamp = h.get("x-svc-timestamp") or ""
    if not re.fullmatch(r"0|[1-9][0-9]{0,15}", timestamp):
        raise InvalidDelivery("x-svc-timestamp is not decimal Unix seconds")
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        raise InvalidDelivery("stale: x-svc-timestamp is over 300 s away")
    signature = h.get("x-svc-signature") or ""
    if not re.fullmatch(r"[0-9a-f]{64}", signature):
        raise InvalidDelivery("x-svc-signature is not lower-case hex")
    signed = timestamp.encode("ascii") + b"." + bytes(raw_body)
    matched = False
    for s in secrets:  # all tried: the time taken does not say which one
        digest = hmac.new(s.encode("utf-8"), signed, hashlib.sha256)
        matched = hmac.compare_digest(digest.hexdigest(), signature) or matched
    if not matched:
        raise InvalidDelivery("x-svc-signature does not match")
    return json.loads(raw_body)
