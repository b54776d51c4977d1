@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

private let t0 = ContinuousClock.now
private let add = PoisonPattern(type: "Counter", event: "add")
private let reset = PoisonPattern(type: "Counter", event: "reset")

private func crash(_ seconds: Int, pid: Int32, _ pattern: PoisonPattern?, from sender: String?, address: String = "counter/k") -> CrashLedger.Crash {
    CrashLedger.Crash(worker: "main", pid: pid, at: t0 + .seconds(seconds), address: address, pattern: pattern, sender: sender)
}

/// Issue 34, crash containment: the coordinator's count of worker crashes by event pattern and
/// by sender, as a pure value.
@Suite("Crash ledger", .timeLimit(.minutes(2)))
struct CrashLedgerTests {
    @Test func aPatternThatCrashesOnFreshAddressesIsQuarantinedAndItsCrashesForgiven() {
        var ledger = CrashLedger(settings: .init(quarantineAfter: 3, suspendAfter: 0, periodMs: 60_000))
        #expect(ledger.count(crash(0, pid: 1, add, from: nil, address: "counter/k-1")).quarantined == nil)
        #expect(ledger.count(crash(1, pid: 2, reset, from: nil, address: "counter/k-2")).quarantined == nil, "another pattern")
        #expect(ledger.count(crash(2, pid: 3, add, from: nil, address: "counter/k-3")).quarantined == nil)
        let third = ledger.count(crash(3, pid: 4, add, from: nil, address: "counter/k-4"))
        #expect(third.quarantined == add)
        #expect(third.patternCrashes == 3)
        #expect(third.forgiven.map(\.pid) == [1, 3, 4], "the crashes of the pattern, not reset's")
        #expect(ledger.patterns == [add])
        #expect(ledger.quarantined[add]?.addresses == ["counter/k-1", "counter/k-3", "counter/k-4"])
        #expect(ledger.count(crash(4, pid: 5, add, from: nil)).forgiven == [], "quarantined already: counted, not forgiven again")
    }

    @Test func aSenderWhoseEventsCrashWorkersIsSuspended() {
        var ledger = CrashLedger(settings: .init(quarantineAfter: 0, suspendAfter: 2, periodMs: 60_000))
        #expect(ledger.count(crash(0, pid: 1, add, from: "mallory")).suspended == nil)
        #expect(ledger.count(crash(1, pid: 2, reset, from: "alice")).suspended == nil)
        let second = ledger.count(crash(2, pid: 3, reset, from: "mallory"))
        #expect(second.suspended == "mallory")
        #expect(second.forgiven.map(\.pid) == [1, 3])
        #expect(ledger.isSuspended("mallory"))
        #expect(!ledger.isSuspended("alice"))
        #expect(ledger.suspended["mallory"]?.patterns == [add, reset])
        #expect(ledger.patterns.isEmpty, "quarantineAfter 0 never quarantines")
    }

    @Test func bothAtOnceForgiveEachCrashOnce() {
        var ledger = CrashLedger(settings: .init())
        _ = ledger.count(crash(0, pid: 1, add, from: "mallory"))
        let second = ledger.count(crash(1, pid: 2, add, from: "mallory"))
        #expect(second.quarantined == add)
        #expect(second.suspended == "mallory")
        #expect(second.forgiven.map(\.pid) == [1, 2])
    }

    @Test func crashesOlderThanThePeriodDoNotCount() {
        var ledger = CrashLedger(settings: .init(quarantineAfter: 2, suspendAfter: 2, periodMs: 10_000))
        _ = ledger.count(crash(0, pid: 1, add, from: "mallory"))
        let late = ledger.count(crash(10, pid: 2, add, from: "mallory"))
        #expect(late.quarantined == nil)
        #expect(late.suspended == nil)
        #expect(late.patternCrashes == 1)
    }

    @Test func liftingAndReleasingForgetTheirCrashes() {
        var ledger = CrashLedger(settings: .init())
        _ = ledger.count(crash(0, pid: 1, add, from: "mallory"))
        _ = ledger.count(crash(1, pid: 2, add, from: "mallory"))
        let lifted = ledger.lift("mallory")
        let liftedAgain = ledger.lift("mallory")
        let released = ledger.release(add)
        let releasedAgain = ledger.release(add)
        #expect(lifted)
        #expect(!liftedAgain, "lifted already")
        #expect(released)
        #expect(!releasedAgain)
        // One more crash starts the count over instead of suspending again at once.
        let next = ledger.count(crash(2, pid: 3, add, from: "mallory"))
        #expect(next.suspended == nil)
        #expect(next.quarantined == nil)
    }

    @Test func theMemoryIsBounded() {
        var ledger = CrashLedger(settings: .init(quarantineAfter: 0, suspendAfter: 0, periodMs: 3_600_000))
        for index in 0..<(CrashLedger.keptCrashes + 10) {
            _ = ledger.count(CrashLedger.Crash(worker: "main", pid: Int32(index), at: t0 + .milliseconds(index), address: "a",
                                               pattern: add, sender: nil))
        }
        #expect(ledger.crashes.count == CrashLedger.keptCrashes)
    }

    @Test func theListSaysHowLongAgo() {
        var ledger = CrashLedger(settings: .init())
        _ = ledger.count(crash(0, pid: 1, add, from: "mallory"))
        _ = ledger.count(crash(1, pid: 2, add, from: "mallory"))
        let list = ledger.list(now: t0 + .seconds(61))
        #expect(list.suspended == [PoisonList.Suspension(key: "mallory", crashes: 2, ageMs: 60_000, patterns: [add])])
        #expect(list.quarantined == [PoisonList.Quarantine(type: "Counter", event: "add", crashes: 2, ageMs: 60_000,
                                                           addresses: ["counter/k", "counter/k"])])
    }
}
