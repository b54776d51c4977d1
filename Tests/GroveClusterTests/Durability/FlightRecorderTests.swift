import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Synchronization
import Testing

/// The flight recorder's file, its suspects, and the crash counts in both stores.
@Suite(.timeLimit(.minutes(2)))
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

    /// Issue 34: the machine's type and the request that carried the event go with it, so a
    /// crash of any machine is attributed to its pattern and its sender.
    @Test func theTypeAndTheRequestAreKeptWithTheEvent() throws {
        let directory = try StoreFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let log = try MappedFlightLog.open(directory: directory.path, worker: "main")
            log.begin(address: "counter/a", type: "Counter", correlation: 0xABCD_EF01_2345_6789, event: [1], binary: true, origin: .sent)
            log.end()
            log.begin(address: "poller/eu", type: "PollingService", correlation: 0, event: [2], binary: true, origin: .timer)
            log.end()
            log.begin(address: "counter/b", type: "Counter", correlation: 42, event: [3], binary: true, origin: .sent)
        }
        let found = try MappedFlightLog.open(directory: directory.path, worker: "main").takeUnfinished()
        #expect(found == RecordedRun(address: "counter/b", event: [3], binary: true, origin: .sent, type: "Counter", correlation: 42))
        do {
            let log = try MappedFlightLog.open(directory: directory.path, worker: "main")
            log.begin(address: "x", type: String(repeating: "T", count: 129), correlation: 1, event: [4], binary: true, origin: .sent)
        }
        let long = try MappedFlightLog.open(directory: directory.path, worker: "main").takeUnfinished()
        #expect(long?.type == nil, "a type name too long to keep is unknown, not cut short")
        #expect(long?.correlation == 1)
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
            recorder.willRun(address: address, type: "T", origin: .sent) { bytes in
                bytes += event
                return true
            }
            recorder.didRun()
        }
        #expect(cleared.withLock { $0 } == ["a [1, 9]"])
        #expect(log.takeUnfinished() == nil)
    }

    @Test func aSentEventRunOnArrivalIsNotedAsTheBytesReceivedAndAnyOtherIsEncoded() {
        let log = MemoryFlightLog()
        let recorder = FlightRecorder(log: log)
        let received = Array(#"{ "add" : { "_0" : 13 } }"#.utf8)
        var encodings = 0
        func encode(_ bytes: inout [UInt8]) -> Bool? {
            encodings += 1
            bytes += [7, 13]
            return true
        }
        recorder.arriving(received[...], binary: false, correlation: 7) {
            recorder.willRun(address: "a", type: "T", origin: .sent, encode: encode)
            #expect(log.last == RecordedRun(address: "a", event: received, binary: false, origin: .sent, type: "T", correlation: 7))
            recorder.didRun()
            // Inline after it, then a queued event the host drains: not the bytes received.
            recorder.willRun(address: "a", type: "T", origin: .inline, encode: encode)
            #expect(log.last == RecordedRun(address: "a", event: [7, 13], binary: true, origin: .inline, type: "T"))
            recorder.didRun()
            recorder.willRun(address: "a", type: "T", origin: .sent, encode: encode)
            #expect(log.last == RecordedRun(address: "a", event: [7, 13], binary: true, origin: .sent, type: "T"))
            recorder.didRun()
        }
        recorder.willRun(address: "b", type: "T", origin: .sent, encode: encode)
        #expect(log.last == RecordedRun(address: "b", event: [7, 13], binary: true, origin: .sent, type: "T"))
        #expect(encodings == 3)
        #expect(log.takeUnfinished() == RecordedRun(address: "b", event: [7, 13], binary: true, origin: .sent, type: "T"))
    }

    @Test func aSuspectRunFromTheBytesReceivedIsClearedByItsCanonicalIdentity() {
        let log = MemoryFlightLog()
        let recorder = FlightRecorder(log: log)
        let cleared = Mutex<[String]>([])
        recorder.onCleared { address, identity in cleared.withLock { $0.append("\(address) \(identity)") } }
        recorder.suspect([1, 9], at: "a")
        let received = Array(#"{"nine" : {}}"#.utf8)
        recorder.arriving(received[...], binary: false, correlation: 7) {
            recorder.willRun(address: "a", type: "T", origin: .sent) { bytes in
                bytes += [9]
                return true
            }
            recorder.didRun()
        }
        #expect(log.last?.event == received)
        #expect(cleared.withLock { $0 } == ["a [1, 9]"])
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
