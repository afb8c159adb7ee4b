from django.contrib import admin

from maintenance.models import JobRunRow, JobStateRow, MaintenanceSessionRow, ProposalRow


@admin.register(JobRunRow)
class JobRunAdmin(admin.ModelAdmin):
    list_display = ("job", "status", "trigger", "started_at", "finished_at")
    list_filter = ("job", "status", "trigger")
    readonly_fields = ("job", "status", "trigger", "started_at", "finished_at", "counts", "error")


@admin.register(JobStateRow)
class JobStateAdmin(admin.ModelAdmin):
    list_display = ("job", "watermark", "paused")


@admin.register(ProposalRow)
class ProposalAdmin(admin.ModelAdmin):
    list_display = ("kind", "status", "score", "action", "created_at", "expires_at")
    list_filter = ("kind", "status")
    search_fields = ("proposal_id", "reason")


@admin.register(MaintenanceSessionRow)
class MaintenanceSessionAdmin(admin.ModelAdmin):
    list_display = ("session_id", "status", "created_at", "expires_at", "finished_at")
    list_filter = ("status",)
