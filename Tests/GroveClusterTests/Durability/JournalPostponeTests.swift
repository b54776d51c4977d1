@testable import GroveWorker
import Foundation
import Grove
import GroveRuntime
import Testing

/// A `journal` instance's replay runs `step`, so it knows which events were postponed: the host
/// journals every event it runs, the deliveries of postponed events too, so replay keeps an
/// event that postponed and forgets the postponed ones when the state's key changes.
@Suite(.timeLimit(.minutes(2)))
struct JournalPostponeTests {
    private let factory = Factory<Keeper>(env: (), path: HostedPath())

    private func journal(_ events: [Keeper.Event]) throws -> [JournalEntry] {
        try events.enumerated().map { index, event in
            JournalEntry(address: "keeper", sequence: UInt64(index + 1), event: [2] + Array(try JSONEncoder().encode(event)), time: 0)
        }
    }

    @Test func replayKeepsWhatIsStillPostponed() throws {
        let replayed = try factory.replaying(try journal([.open, .note("a"), .close, .note("b"), .note("c")]),
                                             onto: Snapshot(state: Keeper.initialState), address: "keeper", flight: nil)
        #expect(replayed.state == .closed(notes: ["a"]))
        #expect(replayed.postponed == [.note("b"), .note("c")])
    }

    @Test func replayForgetsPostponedEventsOnceTheStateChanged() throws {
        // As the host ran them: `b` postponed, `open` changed the state, `b` delivered again.
        let replayed = try factory.replaying(try journal([.note("b"), .open, .note("b")]),
                                             onto: Snapshot(state: Keeper.initialState), address: "keeper", flight: nil)
        #expect(replayed.state == .open(notes: ["b"]))
        #expect(replayed.postponed == nil)
    }

    @Test func replayStartsFromTheRecordsPostponedEvents() throws {
        var record = Snapshot<Keeper>(state: .closed(notes: []))
        record.postponed = [.note("x")]
        let kept = try factory.replaying(try journal([.note("y")]), onto: record, address: "keeper", flight: nil)
        #expect(kept.postponed == [.note("x"), .note("y")])
        let delivered = try factory.replaying(try journal([.open, .note("x")]), onto: record, address: "keeper", flight: nil)
        #expect(delivered.postponed == nil)
        #expect(delivered.state == .open(notes: ["x"]))
    }

    @Test func aHostRestoredFromTheReplayDeliversThemOnTheChange() async throws {
        let replayed = try factory.replaying(try journal([.note("a")]), onto: Snapshot(state: Keeper.initialState),
                                             address: "keeper", flight: nil)
        let host = MachineHost(restoring: replayed)
        host.start()
        #expect(try await host.sendAndWait(.open) == .open(notes: ["a"]))
        await host.stop()
    }

    private func record(_ snapshot: Snapshot<Keeper>) throws -> MachineRecord {
        MachineRecord(address: "keeper", type: "Keeper", snapshot: try DurableRecord.encode(snapshot))
    }

    private func identity(_ event: Keeper.Event) throws -> [UInt8] {
        [2] + Array(try JSONEncoder().encode(event))
    }

    @Test func quarantineSkipsTheLastRunOfAnEventPostponedAndDeliveredAgain() throws {
        // `b` postponed, `open` delivered it again (journaled twice), then `c`: the crash was
        // in the latest run of `b`'s bytes, its delivery.
        let entries = try journal([.note("b"), .open, .note("b"), .note("c")])
        let skipped = try #require(factory.skipping(try identity(.note("b")), record: try record(Snapshot(state: Keeper.initialState)),
                                                    journal: entries))
        #expect(skipped.sequence == 3, "the delivery's sequence, not the postponing one's")
        let before = try DurableRecord.decode(skipped.snapshot, as: Keeper.self)
        #expect(before.state == .open(notes: []))
        #expect(before.postponed == nil)
    }

    @Test func quarantineKeepsTheRecordsPostponedEvents() throws {
        var held = Snapshot<Keeper>(state: .closed(notes: []))
        held.postponed = [.note("x")]
        let entries = try journal([.note("y"), .note("z")])
        let skipped = try #require(factory.skipping(try identity(.note("z")), record: try record(held), journal: entries))
        #expect(skipped.sequence == 2)
        #expect(try DurableRecord.decode(skipped.snapshot, as: Keeper.self).postponed == [.note("x"), .note("y")])
    }
}
