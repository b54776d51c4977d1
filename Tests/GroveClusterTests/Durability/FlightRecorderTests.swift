import Foundation
@testable import GroveCluster
import Synchronization
import Testing

/// The flight recorder's file, its suspects, and the crash counts in both stores.
@Suite(.timeLimit(.minutes(1)))
struct FlightRecorderTests {
    @Test func anEventBegunAndNeverEndedIsFoundByTheNextOpener() throws {
        let directory = try StoreFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try MappedFlightLog.open(directory: directory.path, worker: "main")
            log.begin(address: "counter/a", event: [1, 2, 3], binary: true, origin: .sent)
            log.end()
            log.begin(address: "poller/eu", event: Array(#"{"tick":{}}"#.utf8), binary: false, origin: .timer)
            // The process dies here: no end().
        }
        let path = directory.appendingPathComponent("main.flight").path
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let reopened = try MappedFlightLog.open(directory: directory.path, worker: "main")
        let found = reopened.takeUnfinished()
        #expect(found == RecordedRun(address: "poller/eu", event: Array(#"{"tick":{}}"#.utf8), binary: false, origin: .timer))
        #expect(found?.identity == [2] + Array(#"{"tick":{}}"#.utf8))
        #expect(reopened.takeUnfinished() == nil, "taken once")
    }

    @Test func anEventThatEndedLeavesNothing() throws {
        let directory = try StoreFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try MappedFlightLog.open(directory: directory.path, worker: "main")
            log.begin(address: "counter/a", event: [1, 2, 3], binary: true, origin: .sent)
            log.end()
        }
        #expect(try MappedFlightLog.open(directory: directory.path, worker: "main").takeUnfinished() == nil)
    }

    @Test func aSuspectThatRunsToTheEndIsClearedOnce() {
        let log = MemoryFlightLog()
        let recorder = FlightRecorder(log: log)
        let cleared = Mutex<[String]>([])
        recorder.onCleared { address, identity in cleared.withLock { $0.append("\(address) \(identity)") } }
        recorder.suspect([1, 9], at: "a")
        for (address, event) in [("b", [UInt8(9)]), ("a", [8]), ("a", [9]), ("a", [9])] {
            recorder.willRun(address: address, origin: .sent) { bytes in
                bytes += event
                return true
            }
            recorder.didRun()
        }
        #expect(cleared.withLock { $0 } == ["a [1, 9]"])
        #expect(log.takeUnfinished() == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func crashesAreCountedPerAddressAndEventUntilForgotten(_ kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        #expect(try store.countCrash(of: "a", event: [1, 5], at: 10) == 1)
        #expect(try store.countCrash(of: "b", event: [1, 5], at: 11) == 1)
        #expect(try store.countCrash(of: "a", event: [1, 6], at: 12) == 1)
        #expect(try store.countCrash(of: "a", event: [1, 5], at: 13) == 2)
        #expect(try Set(store.crashes()) == [CrashCount(address: "a", event: [1, 5], count: 2, time: 13),
                                              CrashCount(address: "b", event: [1, 5], count: 1, time: 11),
                                              CrashCount(address: "a", event: [1, 6], count: 1, time: 12)])
        try store.forgetCrashes(of: "a", event: [1, 5])
        #expect(try store.crashes().map(\.address) == ["b", "a"])
        #expect(try store.countCrash(of: "a", event: [1, 5], at: 14) == 1)
    }
}
