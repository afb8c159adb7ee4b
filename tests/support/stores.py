"""Small invented stores that more than one test writes through the real write service (the `mem` fixture): the
memories stand here once, and each test still builds exactly the store it built before."""

from __future__ import annotations

# Six memories on unrelated topics (memory/search/candidates.py's centroid tests: a store of six, sampled by three).
SIX_MEMORIES = (
    "The billing service retries webhooks with jitter",
    "Billing webhooks time out when the queue backs up",
    "The garden sensors report soil moisture every fifteen minutes",
    "Robin prefers tea to coffee in the afternoon",
    "The staging database is restored from last night's backup every Monday",
    "Invoices are generated on the first working day of the month",
)


def dentist(mem, *, filling: bool = False) -> dict:
    """The dentist's appointment and practice (with `filling`, a third dentist note), and the climbing days as the
    one memory on another topic; keyed by those names, written in that order."""
    out = {
        "appointment": mem("Next dentist appointment: 14 April at 09:30 with Dr Jansen.", title="Dentist appointment",
                           tags=["dentist", "health"], auto_link=False),
        "practice": mem("My dentist is Dr Jansen at Tandartspraktijk Oost; call 030 123 4567 to change an appointment.",
                        title="Dentist", tags=["dentist", "health"], auto_link=False),
    }
    if filling:
        out["filling"] = mem("Dr Jansen replaced a filling in my lower left molar in November 2025.",
                             title="Dentist filling", tags=["dentist", "health"], auto_link=False)
    out["gym"] = mem("I go to the climbing gym on Tuesdays and Thursdays after work.", title="Climbing days",
                     auto_link=False)
    return out


# Notes of the invented project "tidewater" (a berth-booking service), as (title, type, content).
TIDEWATER_OVERVIEW = ("Tidewater overview", "project",
                      "Tidewater is the harbour's berth-booking service: a FastAPI app on Postgres, deployed to Fly.io "
                      "from main; skippers book berths by the night and harbour staff confirm them.")
STAFF_SIGN_IN = ("Staff sign-in", "decision",
                 "Harbour staff sign in with magic links sent by e-mail; there are no passwords.")
BERTH_PRICING = ("Berth pricing", "decision",
                 "Berth prices are per metre of boat length per night, stored in cents; no floats for money.")


def project_notes(mem, notes: dict[str, tuple[str, str, str]], *, space: str) -> dict:
    """Each (title, type, content) of `notes` written as a memory of `space`, in order; keyed as `notes` is."""
    return {k: mem(text, title=title, type=kind, space=space, auto_link=False)
            for k, (title, kind, text) in notes.items()}
