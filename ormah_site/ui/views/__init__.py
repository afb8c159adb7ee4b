"""The screens: graph explorer, node panel, stats, proposal review, jobs, whisper (one module each)."""
