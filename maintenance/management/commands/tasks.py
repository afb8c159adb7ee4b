import json

from memory.management.base import OrmahCommand

from maintenance.runner import job_execute, job_pause, sleep_cycle_run
from maintenance.schedules import schedules_sync
from maintenance.services.tasks import task_list


class Command(OrmahCommand):
    help = "Maintenance jobs: list, run NAME, run-all (the sleep cycle), pause NAME, resume NAME, sync."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["list", "run", "run-all", "pause", "resume", "sync"])
        parser.add_argument("name", nargs="?")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        action, name = o["action"], o["name"]
        if action in ("run", "pause", "resume") and not name:
            self.stderr.write(f"`tasks {action}` needs a job name")
            raise SystemExit(2)
        if action == "list":
            rows = task_list()
        elif action == "sync":
            rows = schedules_sync()
        elif action == "run":
            rows = [job_execute(name, trigger="cli").as_dict()]
        elif action == "run-all":
            rows = [outcome.as_dict() for outcome in sleep_cycle_run(trigger="cli")]
        else:
            job_pause(name, paused=action == "pause")
            rows = task_list()
        if o["json"]:
            self.stdout.write(json.dumps(rows, default=str))
        elif action == "list" or action in ("pause", "resume"):
            for t in rows:
                last = t["last_run"]["status"] if t["last_run"] else "never"
                state = "paused" if t["paused"] else f"next {t['next_run']:%Y-%m-%d %H:%M}" if t["next_run"] else "-"
                self.stdout.write(f"{t['name']:<18} every {t['interval_minutes']:>4} min  {state:<24} last: {last}")
        elif action == "sync":
            self.stdout.write(", ".join(f"{k} {v}" for k, v in rows.items()))
        else:
            for r in rows:
                counts = " ".join(f"{k}={v}" for k, v in sorted(r["counts"].items()))
                self.stdout.write(f"{r['job']:<18} {r['status']:<8} {r['seconds']:>7.2f}s  {counts} {r['error']}")
