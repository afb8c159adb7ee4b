"""Read-only admin views of the whisper ledgers: decisions with their candidates, feedback, capture cursors."""

from __future__ import annotations

from django.contrib import admin

from whisper.models import AffinityRow, TranscriptCursorRow, WhisperCandidateRow, WhisperDecisionRow


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class CandidateInline(admin.TabularInline):
    model = WhisperCandidateRow
    extra = 0
    can_delete = False
    fields = ("short_id", "title", "source", "stage", "injected", "retrieval_rank", "retrieval_score", "raw_cosine",
              "ce_abs", "affinity", "gate_score", "gate_threshold", "final_rank")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(WhisperDecisionRow)
class DecisionAdmin(ReadOnly):
    list_display = ("id", "created", "decision", "intent", "session_id", "space", "estimated_tokens", "elapsed_ms",
                    "delivered")
    list_filter = ("decision", "delivered")
    search_fields = ("session_id", "prompt")
    exclude = ("prompt_vec",)
    inlines = [CandidateInline]


@admin.register(AffinityRow)
class AffinityAdmin(ReadOnly):
    list_display = ("node_uid", "signal", "source", "created", "decision")
    list_filter = ("source", "signal")
    exclude = ("prompt_vec",)


@admin.register(TranscriptCursorRow)
class CursorAdmin(ReadOnly):
    list_display = ("path", "session_id", "offset", "stored", "updated")
