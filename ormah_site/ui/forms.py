"""Forms of the node panel. They check and convert input; the services and NodePatch hold the rules."""

from __future__ import annotations

import json

from django import forms
from pydantic import ValidationError

from maintenance.selectors import ProposalResult
from maintenance.services.proposals import ResultEdit

from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.identity import ABOUT_SELF_TAG, SELF_TAGS
from memory.domain.node import Node
from memory.domain.requests import MAX_CONTENT_BYTES, MAX_TITLE_CHARS, NodePatch, validation_message

_TYPES = [(t.value, t.value.capitalize()) for t in NodeType]
_TIERS = [(t.value, t.value.capitalize()) for t in Tier]
_EDGES = [(e.value, e.value.replace("_", " ")) for e in EdgeType if e != EdgeType.DEFINES]
SYSTEM_TAGS = frozenset((*SELF_TAGS, ABOUT_SELF_TAG))  # kept by Ormah itself: shown, never edited as text


class PasteSafeForm(forms.Form):
    """A form whose text fields have no maxlength attribute: the browser cuts a longer paste without a word, and the
    cut text would be saved. Each field's max_length is checked on submit instead, the message next to the field and
    all of the text kept in it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.widget.attrs.pop("maxlength", None)


def as_meant(sent: str, shown: str) -> str:
    """A textarea's text as the person meant it. A plain form post sends every line break as CRLF (HTML's form
    submission; the inbox's Edit page without JavaScript), htmx the LF the textarea shows: text equal to `shown` but
    for line breaks is `shown` itself, byte for byte (a file written with CRLF keeps them), other text has LF."""
    lf = sent.replace("\r\n", "\n")
    return shown if lf == shown.replace("\r\n", "\n") else lf


class NodeEditForm(PasteSafeForm):
    """Edit the fields a person may change; the result is a NodePatch of just the changed fields."""

    title = forms.CharField(required=False, max_length=MAX_TITLE_CHARS,
                            help_text="Leave empty to use the first line of the content.")
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 10}), max_length=MAX_CONTENT_BYTES, strip=False,
                              help_text="Markdown. Raw HTML is shown as text.")
    type = forms.ChoiceField(choices=_TYPES)
    tier = forms.ChoiceField(choices=_TIERS)
    space = forms.CharField(required=False, max_length=100, help_text="Empty means global.")
    tags = forms.CharField(required=False, max_length=2000, help_text="Comma-separated, e.g. postgres, ops")
    confidence = forms.FloatField(min_value=0.0, max_value=1.0, widget=forms.NumberInput(attrs={"step": "0.05"}))
    file_hash = forms.CharField(widget=forms.HiddenInput)

    system_tags: tuple[str, ...] = ()

    @classmethod
    def for_node(cls, node: Node, file_hash: str) -> NodeEditForm:
        form = cls(initial={
            "title": node.title or "", "content": node.content, "type": node.type.value, "tier": node.tier.value,
            "space": node.space or "", "tags": ", ".join(t for t in node.tags if t not in SYSTEM_TAGS),
            "confidence": node.confidence,
            "file_hash": file_hash,
        })
        form.system_tags = tuple(t for t in node.tags if t in SYSTEM_TAGS)
        return form

    def patch_for(self, node: Node) -> NodePatch:
        """The NodePatch of the fields that differ from `node`; adds a form error and raises on invalid input."""
        data = self.cleaned_data
        wanted = {
            "title": data["title"].strip() or None, "content": as_meant(data["content"], node.content),
            "type": data["type"],
            "tier": data["tier"], "space": data["space"].strip() or None,
            # system tags stay as they are, whatever the text field says
            "tags": [*(t for t in node.tags if t in SYSTEM_TAGS),
                     *(t for t in (part.strip().lower() for part in data["tags"].split(","))
                       if t and t not in SYSTEM_TAGS)],
            "confidence": data["confidence"],
        }
        current = {
            "title": node.title, "content": node.content, "type": node.type.value, "tier": node.tier.value,
            "space": node.space, "tags": list(node.tags), "confidence": node.confidence,
        }
        if sorted(wanted["tags"]) == sorted(current["tags"]):
            wanted["tags"] = current["tags"]
        changed = {k: v for k, v in wanted.items() if v != current[k]}
        try:
            return NodePatch(**changed)
        except ValidationError as exc:
            self.add_error(None, validation_message(exc))
            raise


class ConnectForm(PasteSafeForm):
    """A new outgoing connection from the memory in the panel."""

    target = forms.CharField(max_length=MAX_TITLE_CHARS, label="Connect to",  # a whole title, as suggested
                             help_text="Type part of its title and pick it from the list, or pick it in the graph.")
    edge = forms.ChoiceField(choices=_EDGES, initial=EdgeType.RELATED_TO.value, label="Relation")
    weight = forms.FloatField(min_value=0.0, max_value=1.0, initial=0.5,
                              widget=forms.NumberInput(attrs={"step": "0.05"}))
    reason = forms.CharField(required=False, max_length=1000)


class OutdatedForm(PasteSafeForm):
    reason = forms.CharField(required=False, max_length=1000, label="Why is it outdated?")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "outdated-%s")  # the panel's other forms have a `reason` too
        super().__init__(*args, **kwargs)


class TierForm(forms.Form):
    tier = forms.ChoiceField(choices=_TIERS)


class ProposalEditForm(PasteSafeForm):
    """The memory a merge or consolidation proposal would write, as the person wants it (edit before approving).

    `seen` carries the file hash of every memory the proposal reads, as they were when the form was drawn."""

    title = forms.CharField(required=False, max_length=MAX_TITLE_CHARS,
                            help_text="Leave empty to keep the proposed title.")
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 10}), max_length=MAX_CONTENT_BYTES, strip=False,
                              help_text="Markdown. Raw HTML is shown as text.")
    tags = forms.CharField(required=False, max_length=2000, help_text="Comma-separated, e.g. postgres, ops")
    seen = forms.CharField(widget=forms.HiddenInput)

    kept_tags: tuple[str, ...] = ()
    shown_content = ""

    def __init__(self, *args, prefix_id: str = "edit", **kwargs):
        kwargs.setdefault("auto_id", f"{prefix_id}-%s")  # one card's form among many on the page
        super().__init__(*args, **kwargs)

    @classmethod
    def for_result(cls, result: ProposalResult, *, data=None) -> ProposalEditForm:
        """The form of a proposal's result (bound to `data` when given: the person's text, kept as sent)."""
        initial = {"title": result.title, "content": result.content, "tags": ", ".join(result.tags),
                   "seen": json.dumps(result.seen, sort_keys=True)}
        form = cls(data, initial=initial, prefix_id=f"edit-{result.proposal_id[:8]}")
        form.kept_tags, form.shown_content = result.kept_tags, result.content
        return form

    def clean_seen(self) -> dict[str, str]:
        try:
            seen = json.loads(self.cleaned_data["seen"])
        except ValueError:
            seen = None
        if not isinstance(seen, dict) or not all(isinstance(v, str) for v in seen.values()):
            raise forms.ValidationError("The form is damaged; open Edit again.")
        return seen

    def result_edit(self) -> ResultEdit:
        """The person's result, validated as the API validates it; each rule broken goes next to its field."""
        data = self.cleaned_data
        try:
            return ResultEdit(title=data["title"], content=as_meant(data["content"], self.shown_content),
                              tags=[t.strip() for t in data["tags"].split(",") if t.strip()])
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                name = str(error["loc"][0]) if error["loc"] else ""
                message = error["msg"].removeprefix("Value error, ")
                self.add_error(name if name in self.fields else None, message[:1].upper() + message[1:] + ".")
            raise
