"""Pure detectors: node facts and similarities in, proposal drafts and decisions out. No Django, no I/O."""
