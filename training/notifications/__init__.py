"""Notifications of job transitions: queued once, sent by the watcher, to whoever may
still see the job.

- Queued: `queue_for(transition)` runs in the database transaction that records the
  transition (training/live/hub/keepers/transitions.py), so each transition queues its deliveries
  exactly once, whichever watcher recorded it and whenever (a transition found after a
  restart queues like any other). One delivery per subscription and channel; the unique
  constraint makes a second impossible.
- Sent: by `training.live.hub.keepers.notifying.NotificationSender`, in the process that runs the
  hub (runwatcher, or the embedded hub), never by a web request. Each attempt is claimed
  first: `claim_due` moves `claimed_until` with a conditional update and only the
  watcher whose update changed the row sends (as healthchecks claims a Flip). A watcher
  killed while sending leaves the claim to expire (`NOTIFY_CLAIM_SECONDS`); the next
  claims it again: a message to the dashboard's bell is written with its delivery's end in one
  transaction (exactly once); an email or a webhook whose sending was cut between the
  receiver's answer and the record of it is sent again (at least once: the webhook's
  `X-ODH-Delivery` header names the delivery, for receivers that want to drop repeats).
- Signs: a job Pending longer than a person's N minutes, a possible hang, a restart, and
  the early warnings before a failure (odh/training/signs.py) are claimed by the watcher
  as a `JobSignal` per occurrence (training/live/hub/keepers/signs.py), and `queue_for_signal`
  queues their deliveries in that transaction: once per occurrence, like a transition's.
- Checked: before each send, a SubjectAccessReview asks, with the dashboard's own
  service account, whether the person (as their groups were when they subscribed) may
  still get the job; if not, nothing is sent.
- Retried: a failure that may pass (the network, a 5xx, 408, 429) is tried again with
  back-off (`RETRY_FIRST` doubling to `RETRY_MAX`) for `GIVE_UP_AFTER` (a day); a refusal
  (an address webhooks may not reach, a 4xx) is not. A webhook answering 410 Gone turns
  its subscription off and tells its owner in the dashboard.

The parts: queueing (queued and claimed), messages (what is said), sending (one claimed
delivery sent), bell (the dashboard's own notices).
"""

from __future__ import annotations

from training.notifications.bell import notice_fields, unread_count
from training.notifications.messages import (
    SIGNAL_EVENTS,
    TEST_EVENT,
    TRANSITION_EVENT,
    Message,
    job_url,
    message_of,
    signal_label,
)
from training.notifications.queueing import (
    allow_list,
    channels_of,
    claim_due,
    kind_named,
    new_secret,
    queue_for,
    queue_for_signal,
    queue_test,
    subscribers,
    wants_signal,
)
from training.notifications.sending import (
    GIVE_UP_AFTER,
    RETRY_FIRST,
    RETRY_MAX,
    Gone,
    Passing,
    Permanent,
    deliver,
    may_see_with_sar,
    send_email,
    send_webhook,
)

__all__ = [
    "GIVE_UP_AFTER", "RETRY_FIRST", "RETRY_MAX", "SIGNAL_EVENTS", "TEST_EVENT",
    "TRANSITION_EVENT", "Gone", "Message", "Passing", "Permanent", "allow_list", "channels_of",
    "claim_due", "deliver", "job_url", "kind_named", "may_see_with_sar", "message_of",
    "new_secret", "notice_fields", "queue_for", "queue_for_signal", "queue_test",
    "send_email", "send_webhook", "signal_label", "subscribers", "unread_count",
    "wants_signal",
]
