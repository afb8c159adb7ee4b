"""Write services of the whisper app (re-exported here; see each module)."""

from whisper.services.capture import CaptureResult, transcript_capture
from whisper.services.feedback import FeedbackResult, feedback_submit
from whisper.services.respond import ledger_prune, whisper_delivered, whisper_respond
from whisper.services.warm import conventions_warm

__all__ = [
    "CaptureResult", "FeedbackResult", "conventions_warm", "feedback_submit", "ledger_prune", "transcript_capture",
    "whisper_delivered", "whisper_respond",
]
