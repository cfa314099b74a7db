"""directme.answerers."""
