"""Trust at read time: recall warnings, scopes, core blocks, session states and budgeted context packs.

`context_pack_build` is the router of docs/trust.md; `hits_with_warnings` is what recall uses to attach warnings.
"""
