"""The evidence ledger: append-only JSON Lines day files (canonical) and their derived index (docs/trust.md)."""
