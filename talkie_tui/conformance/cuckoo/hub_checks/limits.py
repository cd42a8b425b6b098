"""The numbers of `cuckoo-agent.md` the hub checks hold a hub to.

The checks read them as `limits.NAME` when they run, so a test may hold a hub of shorter
timers to its own numbers."""

from __future__ import annotations

MIB = 1024 * 1024
LEASE = 30.0  # "not acknowledged within 30 seconds becomes due again"
QUIET = 2.0  # how long an event that must not come again is waited for
WEBHOOK_WAIT = 10.0  # the first post, or its retry "after 1 second"
FRAME_CAP = 64 * 1024
PING_INTERVAL = 30.0  # "The server pings every 30 seconds
PONG_WAIT = 15.0  # and expects an answer within 15."
PING_SLACK = 5.0  # the hub's timers, the network and ours
IDLE = 30.0  # "A stream that is idle for 30 seconds is finished by the hub and marked truncated"
MAX_FILES = 10
LEASE_BATCH = 100  # "The hub leases up to 100 events at a time."
PAGE_MAX = 100  # "/events … up to 100 at a time"
TYPING = 10.0  # "A start expires by itself after 10 seconds."
TYPING_SKEW = 5.0  # the hub's clock and ours
IMAGE_MAX = 16 * MIB
RETRIES = (1.0, 5.0, 30.0)  # "retried after 1 second, then 5 seconds, 30 seconds"
PERSON_BURST = 25  # messages one person may send at once (the hub's burst is 30)
PAGE_READ = 20  # a page of this many stays within the 64 KiB of an answer the checks read
CLOCK_SKEW = 300.0
