"""directme.query."""
