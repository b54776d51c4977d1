@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// The gap logic of a watcher, fed numbers: no sockets.
@Suite("PublicationTracker: gaps, restarts, snapshots", .timeLimit(.minutes(2)))
struct PublicationTrackerTests {
    static func numbered(_ number: UInt64, epoch: UInt64 = 7) -> PublicationSequence {
        PublicationSequence(epoch: epoch, number: number)
    }

    static func delivered(missed: UInt64 = 0) -> PublicationTracker.Verdict {
        PublicationTracker.Verdict(missed: missed)
    }

    @Test func consecutiveNumbersOnATopicAreNoGap() {
        var tracker = PublicationTracker()
        for number in 1...5 as ClosedRange<UInt64> {
            #expect(tracker.observe(topic: "state:auth", sequence: Self.numbered(number)) == Self.delivered())
        }
    }

    @Test func aJumpOnATopicCountsTheMissedOnes() {
        var tracker = PublicationTracker()
        _ = tracker.observe(topic: "state:auth", sequence: Self.numbered(1))
        _ = tracker.observe(topic: "state:auth", sequence: Self.numbered(2))
        #expect(tracker.observe(topic: "state:auth", sequence: Self.numbered(9)) == Self.delivered(missed: 6))
        #expect(tracker.observe(topic: "state:auth", sequence: Self.numbered(10)) == Self.delivered())
    }

    @Test func eachTopicCountsOnItsOwn() {
        // A watcher of two topics sees their numbers interleaved; neither is a gap of the other.
        var tracker = PublicationTracker()
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(1)) == Self.delivered())
        #expect(tracker.observe(topic: "state:b", sequence: Self.numbered(1)) == Self.delivered())
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(2)) == Self.delivered())
        #expect(tracker.observe(topic: "state:b", sequence: Self.numbered(4)) == Self.delivered(missed: 2))
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(3)) == Self.delivered())
    }

    @Test func theFirstNumberSeenOnATopicIsWhereItStands() {
        // A watcher that joins late, or a topic that starts while it watches: no gap to report.
        var tracker = PublicationTracker()
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(41)) == Self.delivered())
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(42)) == Self.delivered())
    }

    @Test func aNewEpochIsARestartNotAGap() {
        var tracker = PublicationTracker()
        _ = tracker.observe(topic: "state:a", sequence: Self.numbered(30, epoch: 7))
        var expected = Self.delivered()
        expected.restarted = (7, 8)
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(3, epoch: 8)) == expected)
        // Counting starts over in the new epoch.
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(4, epoch: 8)) == Self.delivered())
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(6, epoch: 8)) == Self.delivered(missed: 1))
        #expect(tracker.epoch == 8)
    }

    @Test func unnumberedPublicationsAreHandedOnUntracked() {
        // From a coordinator that predates numbering (correlation 0).
        var tracker = PublicationTracker()
        #expect(PublicationSequence(correlation: 0) == nil)
        #expect(tracker.observe(topic: "state:a", sequence: nil) == Self.delivered())
        #expect(tracker.epoch == nil)
    }

    @Test func aSnapshotMakesOlderPublicationsStaleAndCoversWhatWasMissed() {
        var tracker = PublicationTracker()
        _ = tracker.observe(topic: "state:a", sequence: Self.numbered(3))
        let snapshot = StateSnapshot(epoch: 7, states: [
            .init(topic: "state:a", sequence: 10, payload: .object(["state": .integer(10)])),
            .init(topic: "state:b", sequence: 4, payload: .object(["state": .integer(4)])),
        ])
        #expect(tracker.apply(snapshot) == snapshot.states)
        // Publications the watcher still had queued from before the snapshot are skipped...
        var stale = Self.delivered()
        stale.deliver = false
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(4)) == stale)
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(10)) == stale)
        // ...and the next one after the snapshot's number is no gap.
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(11)) == Self.delivered())
        #expect(tracker.observe(topic: "state:b", sequence: Self.numbered(5)) == Self.delivered())
    }

    @Test func aSnapshotEntryOlderThanWhatWasSeenIsLeftOut() {
        // The publication after the snapshot's number arrived first (two sockets): the
        // snapshot's state for that topic is older, so it is not shown again.
        var tracker = PublicationTracker()
        _ = tracker.observe(topic: "state:a", sequence: Self.numbered(11))
        let snapshot = StateSnapshot(epoch: 7, states: [.init(topic: "state:a", sequence: 10, payload: .null)])
        #expect(tracker.apply(snapshot).isEmpty)
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(12)) == Self.delivered())
    }

    @Test func aSnapshotEntryAtTheNumberSeenLastIsStillTheCurrentState() {
        // A watcher cannot tell from its own numbers that a topic's last publications were
        // dropped; the snapshot is the word on every address, so it is handed on whole.
        var tracker = PublicationTracker()
        _ = tracker.observe(topic: "state:a", sequence: Self.numbered(10))
        let snapshot = StateSnapshot(epoch: 7, states: [.init(topic: "state:a", sequence: 10, payload: .null)])
        #expect(tracker.apply(snapshot) == snapshot.states)
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(11)) == Self.delivered())
    }

    @Test func aSnapshotOfAnotherEpochStartsCountingAfresh() {
        var tracker = PublicationTracker()
        _ = tracker.observe(topic: "state:a", sequence: Self.numbered(50, epoch: 7))
        let snapshot = StateSnapshot(epoch: 9, states: [.init(topic: "state:a", sequence: 2, payload: .null)])
        #expect(tracker.apply(snapshot).count == 1)
        #expect(tracker.observe(topic: "state:a", sequence: Self.numbered(3, epoch: 9)) == Self.delivered())
    }

    @Test func aSequenceTravelsInTheCorrelationField() {
        let sequence = PublicationSequence(epoch: 0x6B_CDEF, number: 17)
        #expect(sequence.correlation == UInt64(0x6B_CDEF) << 40 | 17)
        #expect(PublicationSequence(correlation: sequence.correlation) == sequence)
    }
}
