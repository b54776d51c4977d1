import GroveWire

extension WorkerCore {
    /// What a worker does about the event its last process died running, at a durable
    /// machine's address (``WorkerRuntime/watchForPoison(store:records:)`` carries it out).
    enum CrashVerdict: Equatable {
        /// The event was not recorded (too large, or it did not encode): nothing to count.
        case unrecorded(String)
        /// Count the crash in the store against the event (its canonical identity), then ask
        /// ``judge(_:crashes:type:now:)``.
        case count(identity: [UInt8])
    }

    /// After the crash was counted: whether the event is quarantined.
    enum CrashJudgement: Equatable {
        /// Not yet: the line to log.
        case forgiven(String)
        /// Quarantined: keep `letter` (and take the event out of the machine's stored record
        /// or journal), forget the count, then log `quarantined` with what was taken out.
        case quarantine(DeadLetter)
    }

    /// The first look at the event the last process died running (made canonical).
    func crashVerdict(_ run: RecordedRun) -> CrashVerdict {
        let identity = run.identity
        guard !identity.isEmpty else {
            return .unrecorded("the last process of worker \(worker) died while \(run.address) ran a \(run.origin.noun) that was not "
                + "recorded (too large, or it did not encode); it cannot be quarantined")
        }
        return .count(identity: identity)
    }

    /// The event has now killed `crashes` processes of this worker: at
    /// ``PoisonWatch/crashesToQuarantine`` it is quarantined (one crash is not enough: an
    /// operator's kill -9 lands in the middle of some innocent event).
    /// - Parameters:
    ///   - type: Its machine's type, for the dead letter.
    ///   - now: Milliseconds since 1970.
    func judge(_ run: RecordedRun, crashes: Int, type: String, now: Int64) -> CrashJudgement {
        guard crashes >= PoisonWatch.crashesToQuarantine else {
            return .forgiven("the last process of worker \(worker) died while \(run.address) ran a \(run.origin.noun); crash \(crashes) "
                + "of \(PoisonWatch.crashesToQuarantine) before that event is quarantined (it is forgiven once it runs to the end)")
        }
        return .quarantine(DeadLetter(address: run.address, type: type, event: run.event, binary: run.binary,
                                      error: "the worker died while running it, \(crashes) times (a \(run.origin.noun))",
                                      crashes: crashes, time: now))
    }

    /// What a crash count the store holds when it opens says about its event.
    enum StoredCrash: Equatable {
        /// Under ``PoisonWatch/crashesToQuarantine``: watch the event; it is forgiven once it
        /// runs to the end.
        case suspect
        /// At the threshold with no dead letter for it: a quarantine whose commit failed (the
        /// process ended, ``WorkerFailure/quarantineWrite(address:_:)``, leaving the stored
        /// record with the event and the count in place). Quarantine `run` now, before
        /// recovery brings its machine back, so the event does not run a third time.
        case quarantine(RecordedRun)
        /// At the threshold with its dead letter: the quarantine was committed and only
        /// forgetting its count failed: forget it now.
        case forget
    }

    /// What to do about `crash`, found in the store as it opens, given its dead letters. The
    /// event is rebuilt from the count's identity (canonical already); where it came from is
    /// not kept with the count, so a resumed quarantine looks for it in the record's queue,
    /// timers and interrupted io (not in the machine's work).
    func storedCrash(_ crash: CrashCount, deadLetters: [DeadLetter]) -> StoredCrash {
        guard crash.count >= PoisonWatch.crashesToQuarantine, let codec = crash.event.first else { return .suspect }
        let run = RecordedRun(address: crash.address, event: Array(crash.event.dropFirst()), binary: codec == RecordedRun.codecByte(binary: true),
                              origin: .unknown)
        let quarantined = deadLetters.contains {
            $0.address == crash.address && RecordedRun(address: $0.address, event: $0.event, binary: $0.binary, origin: .unknown).identity == crash.event
        }
        return quarantined ? .forget : .quarantine(run)
    }

    /// The line a quarantine logs once it is in the store.
    /// - Parameter taken: What was taken out of the machine's stored state.
    func quarantined(_ run: RecordedRun, crashes: Int, taken: QuarantineTaking) -> String {
        let place = switch taken {
        case .nothing: ""
        case .fromRecord: "; taken out of its stored record"
        case .fromJournal: "; skipped in its journal"
        }
        return "quarantined a \(run.origin.noun) of \(run.address): worker \(worker) died running it \(crashes) times\(place). "
            + "The machine continues from its state before it; list it with `fsm-send dead-letters`"
    }

    /// Where a quarantined event was taken out of the machine's stored state.
    enum QuarantineTaking: Equatable {
        /// Nowhere: it was not in the stored state (an event that ran as it arrived).
        case nothing
        /// Out of its stored record (its queue, or the work that would deliver it).
        case fromRecord
        /// Skipped in its journal, which a `journal` machine replays after its record.
        case fromJournal
    }
}
