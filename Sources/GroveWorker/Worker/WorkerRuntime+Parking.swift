import DequeModule
import GroveWire
import ZeroMQ

/// A turn that spent its time bringing stored instances back on demand
/// (``Recovery/turnIsOver(now:)``) parks the rest of what it received; these decide it later,
/// in turns of their own, after the loop has run (heartbeats, reads).
extension WorkerRuntime {
    /// Schedules a turn for the parked messages, unless one is scheduled already.
    func resumeParkedLater() {
        // Messages are parked only by a turn that ran out of time.
        recovery.turnsCut += 1
        guard !parked.resuming else { return }
        parked.resuming = true
        // A heartbeat due goes first (the tick task may wait behind the instances' tasks).
        run(core.tick(now: .now))
        Task {
            await self.link.loop.pause()
            self.resumeParked()
        }
    }

    /// Decides parked messages in a turn of their own.
    private func resumeParked() {
        parked.resuming = false
        guard !parked.isEmpty else { return }
        runTurn { queueParked(now: .now) }
    }

    /// Parked messages, oldest first, until a turn's restores run out of time.
    func queueParked(now: ContinuousClock.Instant) {
        while !turnIsOver {
            if let rest = parked.batch {
                parked.batch = nil
                queue(envelopes: rest.envelopes, from: rest.next, of: rest.payload, now: now)
            } else if let inbound = parked.messages.popFirst() {
                queue(inbound, now: now)
            } else {
                return
            }
        }
    }
}

/// Messages from the coordinator received and not yet decided, in arrival order.
struct ParkedInbound {
    /// The rest of the batch message a turn stopped in: its envelopes from `next` on. Decided
    /// before `messages`, which arrived after it.
    var batch: (payload: [UInt8], envelopes: [Envelope], next: Int)?
    var messages: Deque<Inbound> = []
    /// Whether a turn to decide them is scheduled.
    var resuming = false

    var isEmpty: Bool { batch == nil && messages.isEmpty }
}
