"""Is a signed body a JSON object, and whose repository is it: checked where it is stored.

Called by the store (its thread, or `serve`'s store process) for a whole batch, so the
receiver's event loop does not spend a third of a delivery's CPU on JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from bot.events import repo_full_name
from bot.queue import Delivery, JobQueue
from bot.queue.records import payload_bytes

NOT_JSON = "the body is not valid JSON"
NOT_OBJECT = "the payload must be a JSON object"
REASONS = (NOT_JSON, NOT_OBJECT)
"""Every reason `parse` gives (the store process sends its index)."""


# What the receiver reads of a payload: `repository.full_name`, for the jobs page. The
# whole body is still checked to be JSON (jiter, pydantic-core's parser, checks every
# value it skips), but only those two levels become Python objects: about 3x cheaper than
# json.loads on a 12 KB delivery. Stricter than json.loads: lone surrogates, a BOM and
# nesting deeper than jiter's limit are refused.
_SHAPE = SchemaValidator(
    cs.typed_dict_schema(
        {
            "repository": cs.typed_dict_field(
                cs.union_schema(
                    [
                        cs.typed_dict_schema(
                            {"full_name": cs.typed_dict_field(cs.any_schema(), required=False)},
                            extra_behavior="ignore",
                            total=False,
                        ),
                        cs.any_schema(),
                    ]
                ),
                required=False,
            )
        },
        extra_behavior="ignore",
        total=False,
    )
)


def parse(body: bytes, form: bool) -> tuple[bytes, dict[str, Any]] | str:
    """(raw JSON, the payload's `repository.full_name` part) or why the body is refused."""
    raw = body
    try:
        if form:  # "application/x-www-form-urlencoded" webhooks: payload=<json>
            raw = parse_qs(body.decode(), strict_parsing=True)["payload"][0].encode()
        shape: dict[str, Any] = _SHAPE.validate_json(raw)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "dict_type":
            return NOT_OBJECT
        return NOT_JSON
    except (ValueError, KeyError, RecursionError):
        return NOT_JSON
    return raw, shape


def checked(body: bytes) -> tuple[bytes, str] | str:
    """(the JSON, its `repository.full_name` or "") of a JSON body, or why it is refused."""
    parsed = parse(body, form=False)
    if isinstance(parsed, str):
        return parsed
    raw, shape = parsed
    return raw, repo_full_name(shape) or ""


@dataclass(frozen=True, slots=True)
class Incoming:
    """A signed delivery on its way to the store; `checked`: its JSON was checked and its
    repository read already (form-encoded bodies), else the store does both."""

    delivery: Delivery
    checked: bool = False


Verdict = bool | str
"""True: stored; False: a delivery id known already; a string: why the body is refused."""


def check_batch(items: Sequence[Incoming]) -> tuple[list[Verdict | None], list[Delivery]]:
    """Per item, why its body is refused (None: good), and the good deliveries, in order."""
    verdicts: list[Verdict | None] = []
    good: list[Delivery] = []
    for item in items:
        d = item.delivery
        body = payload_bytes(d.payload)
        found = (body, d.repo) if item.checked else checked(body)
        if isinstance(found, str):
            verdicts.append(found)
            continue
        good.append(Delivery(d.delivery_id, d.event_name, found[0], found[1]))
        verdicts.append(None)
    return verdicts, good


def merged(verdicts: list[Verdict | None], fresh: Sequence[bool]) -> list[Verdict]:
    """`check_batch`'s verdicts with the good deliveries' (in order) filled in."""
    it = iter(fresh)
    return [next(it) if v is None else v for v in verdicts]


def store_checked(queue: JobQueue, items: Sequence[Incoming]) -> list[Verdict]:
    """Check each unchecked body, then store the good ones in one durable transaction."""
    verdicts, good = check_batch(items)
    return merged(verdicts, queue.enqueue_many(good) if good else [])
