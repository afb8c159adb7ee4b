"""The site's own table: API tokens kept in the database, so every host serving one database accepts them."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class ApiTokenRow(models.Model):
    """Ledger: not derived. A named API token (`ormah token create NAME`); only the sha256 of its secret is kept.

    The secret is 32 random bytes, so a plain sha256 is enough (nothing to brute-force, no salt needed) and the
    digest can be looked up by its unique index. A revoked token keeps its row (revoked_at set); a name is unique
    among the tokens not revoked, so it can be reused after a revoke.
    """

    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True)  # sha256 hex of the secret
    created_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)  # written at most once a minute (ormah_site/tokens.py)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API token"
        constraints = [models.UniqueConstraint(fields=["name"], condition=Q(revoked_at__isnull=True),
                                               name="apitoken_active_name_unique")]

    def __str__(self) -> str:
        return self.name
