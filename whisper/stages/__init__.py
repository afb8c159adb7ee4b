"""Whisper's stages. Each is `stage(run, conf, deps) -> decision | None`: None lets the next stage run, a decision
string ("silent:...") ends the call. Candidates that drop out keep the stage that dropped them (the ledger)."""
