import DequeModule
import GroveWire
import ZeroMQ

/// A turn that spent its time bringing stored instances back on demand
/// (``Recovery/turnIsOver(now:)``) parks the rest of what it received; these decide it later,
/// in turns of their own, after the loop has run (heartbeats, reads). What to do is decided by
/// ``Recovery/turnEnded(leaving:)`` and ``ParkedInbound``; this carries it out.
extension WorkerRuntime {
    /// After a turn: a turn for the parked messages, after a pause, unless one is scheduled.
    func resumeParkedLater() {
        guard recovery.turnEnded(leaving: &parked) else { return }
        // A heartbeat due goes first (the tick task may wait behind the instances' tasks).
        run(core.tick(now: .now))
        pause(then: .resumeParked)
    }

    /// Decides parked messages in a turn of their own, once the pause is over.
    func resumeParked() {
        guard parked.pauseEnded() else { return }
        runTurn { queueParked(now: .now) }
    }

    /// Parked messages, oldest first, until a turn's restores run out of time.
    func queueParked(now: ContinuousClock.Instant) {
        while !turnIsOver, let next = parked.next() {
            switch next {
            case .batch(let payload, let envelopes, let first):
                queue(envelopes: envelopes, from: first, of: payload, now: now)
            case .message(let inbound):
                queue(inbound, now: now)
            }
        }
    }

    /// What runs after a ``pause(then:)``.
    enum AfterPause {
        /// The next chunk of recovery (``recoverSome()``).
        case recoverSome
        /// A turn for the parked messages (``resumeParked()``).
        case resumeParked
    }

    /// The runtime's one pause: a short yield in which the loop reads and sends (heartbeats,
    /// replies), then `next`. Recovery between its chunks and parked messages between their
    /// turns wait here, so a test's executor can drive it in one place.
    func pause(then next: AfterPause) {
        Task {
            await self.link.loop.pause()
            switch next {
            case .recoverSome: self.recoverSome()
            case .resumeParked: self.resumeParked()
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
    /// Whether a turn to decide them is scheduled (``Recovery/turnEnded(leaving:)``).
    var resumeScheduled = false

    var isEmpty: Bool { batch == nil && messages.isEmpty }

    /// One parked thing to decide.
    enum Next {
        /// The rest of a batch: its envelopes from `first` on.
        case batch(payload: [UInt8], envelopes: [Envelope], first: Int)
        case message(Inbound)
    }

    /// The oldest parked thing, taken out: the rest of a batch before the messages that
    /// arrived after it. Nil when nothing is parked.
    mutating func next() -> Next? {
        if let rest = batch {
            batch = nil
            return .batch(payload: rest.payload, envelopes: rest.envelopes, first: rest.next)
        }
        return messages.popFirst().map { .message($0) }
    }

    /// The pause before the scheduled turn is over.
    /// - Returns: Whether that turn runs: something is still parked (a reconnection drops it).
    mutating func pauseEnded() -> Bool {
        resumeScheduled = false
        return !isEmpty
    }
}
