"""Compatibility shims for the installed third-party stack (applied lazily, never at `import directme`)."""
