"""Notifications across processes: two `runwatcher` replicas on one PostgreSQL database and
one Redis, against the demo cluster, alice's webhook a local receiver that checks the HMAC.

- A job of hers fails while both watch: exactly one delivery reaches the receiver, sent in
  one attempt (a second watcher's send would have had to claim it again), and exactly one
  email (Django's file backend, shared by both watchers).
- Another fails, and both watchers are killed while the receiver holds that delivery (it
  got the body; the watcher never learnt the answer). Started again, a watcher claims the
  delivery once its claim has expired and sends it again with the same X-ODH-Delivery id,
  so the receiver, dropping repeats by that id, keeps one; the delivery ends sent.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from tests.integration.hub.test_history import Database, Watcher
from tests.simcluster_process import ROOT
from tests.training_jobs import mpijob
from tests.waiting import wait_until
from tests.webhook_receiver import serving, signed_by

SECRET = "alice-watchers-secret"
CLAIM_SECONDS = 15  # the least NOTIFY_CLAIM_SECONDS: a killed sender's claim expires


class _Holding(signed_by(SECRET)):
    """Keeps the delivery's id; holds the answer to a job named in `server.hold` until the
    test lets it go (the watcher is killed meanwhile)."""

    def do_POST(self):
        self.server.ids.append(self.headers.get("X-ODH-Delivery"))
        if any(f'"job": "{name}"' in self.server.peek(self) for name in self.server.hold):
            self.server.held.set()
            self.server.release.wait(30)
        super().do_POST()


def _peek(handler) -> str:
    """The body, read once and put back for the signature check."""
    import io

    length = int(handler.headers["Content-Length"])
    body = handler.rfile.read(length)
    handler.rfile = io.BytesIO(body)
    return body.decode()


class _Watcher(Watcher):
    """A runwatcher on the database and on Redis, allowed the local receiver."""

    def __init__(self, sim, db: Database, log_path: Path, redis_url: str) -> None:
        env = db.env

        def with_redis(**extra: str) -> dict[str, str]:
            return dict(env(**extra), REDIS_URL=redis_url, NOTIFY_WEBHOOK_ALLOW="127.0.0.1",
                        NOTIFY_CLAIM_SECONDS=str(CLAIM_SECONDS),
                        EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
                        EMAIL_FILE_PATH=str(log_path.parent / "mail"))

        db.env = with_redis
        try:
            super().__init__(sim, db, log_path)
        finally:
            db.env = env


def _subscribe(db: Database, url: str) -> None:
    code = ("from training.models import NotificationSubscription as S; "
            f"S.objects.create(username='alice', scope='mine', statuses=['Failed'], "
            f"in_dashboard=False, email='alice@example.com', webhook_url={url!r}, "
            f"webhook_secret={SECRET!r})")
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT,
                            env=db.env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def _fails(name: str) -> dict:
    return mpijob(name, workers=1, run_seconds=30, annotations={
        "opendatahub.io/username": "alice", "simcluster.io/failure": "oom",
        "simcluster.io/failure-after-seconds": "2"})


def test_one_webhook_delivery_per_failure_across_watchers_and_a_kill_mid_delivery(
        demo, jobs, redis_server, tmp_path):
    db = Database("postgresql", tmp_path)
    with serving(_Holding) as receiver:
        receiver.ids, receiver.hold = [], {"cut-mid-send"}
        receiver.held, receiver.release = threading.Event(), threading.Event()
        receiver.peek = _peek
        watchers = []
        try:
            _subscribe(db, f"http://127.0.0.1:{receiver.server_address[1]}/alice")
            watchers = [_Watcher(demo, db, tmp_path / f"watcher-{n}.log", redis_server.url)
                        for n in (1, 2)]
            for watcher in watchers:
                watcher.wait_ready()

            def deliveries(name: str, channel: str = "webhook") -> list[tuple]:
                rows = db.query(
                    "SELECT d.id, d.state, d.attempts, d.status_code, t.name, t.to_status, "
                    "d.channel FROM training_notificationdelivery d JOIN "
                    "training_jobtransition t ON t.id = d.transition_id ORDER BY d.id")
                return [row[:4] for row in rows if row[4:] == (name, "Failed", channel)]

            def emails(name: str) -> int:
                mail = tmp_path / "mail"
                return sum(1 for f in (mail.glob("*.log") if mail.exists() else [])
                           for line in f.read_text(errors="replace").splitlines()
                           if line.startswith("Subject:") and name in line)

            def received(name: str) -> list[tuple]:
                return [(signed, body) for _path, signed, body in receiver.received
                        if body["job"] == name]

            # both watching: one delivery, one attempt, one POST, signed
            jobs.create(_fails("fails-watched"))
            wait_until(lambda: [row[1] for row in deliveries("fails-watched")] == ["sent"],
                       120, message=lambda: f"{deliveries('fails-watched')}")
            ((_pk, _state, attempts, code),) = deliveries("fails-watched")
            assert (attempts, code) == (1, 204)
            ((signed, body),) = received("fails-watched")
            assert signed and (body["to"], body["project"]) == ("Failed", "team-nlp")
            wait_until(lambda: emails("fails-watched") == 1, 60, message="her one email")
            assert [row[1:3] for row in deliveries("fails-watched", "email")] == [("sent", 1)]

            # both killed while the receiver holds the delivery, then started again
            jobs.create(_fails("cut-mid-send"))
            assert receiver.held.wait(120), [w.log()[-2000:] for w in watchers]
            for watcher in watchers:
                watcher.kill()
            receiver.release.set()
            ((pk, state, _attempts, _code),) = deliveries("cut-mid-send")
            assert state == "queued"  # the answer never reached a watcher
            watchers = [_Watcher(demo, db, tmp_path / f"again-{n}.log", redis_server.url)
                        for n in (1, 2)]
            wait_until(lambda: [row[1] for row in deliveries("cut-mid-send")] == ["sent"],
                       CLAIM_SECONDS + 90, message=lambda: f"{deliveries('cut-mid-send')}")
            cut = received("cut-mid-send")
            assert len(cut) == 2 and all(signed for signed, _body in cut)
            assert cut[0][1] == cut[1][1]  # the same message
            ids = [i for i in receiver.ids if i == str(pk)]
            assert ids == [str(pk), str(pk)]  # the same X-ODH-Delivery: one, once dropped
            assert len(received("fails-watched")) == 1  # nothing sent again
            assert emails("fails-watched") == 1
            for watcher in watchers:
                assert watcher.process.poll() is None, watcher.log()
                assert "Traceback" not in watcher.log(), watcher.log()
        finally:
            receiver.release.set()
            for watcher in watchers:
                watcher.stop()
            db.drop()

