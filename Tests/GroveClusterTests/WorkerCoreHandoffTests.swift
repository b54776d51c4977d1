import Grove
@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Logging
import Testing

/// The worker that lost instances in a handoff (issue 37): a commit the shared store refused
/// for some of its machines is committed again without them, and those leave the worker (their
/// wake timers too), each logged once; a registration again asks the store which moved. Pure:
/// no store, socket or clock.
@Suite(.timeLimit(.minutes(2)))
struct WorkerCoreHandoffTests {
    let wall = Timestamp(sinceEpoch: .seconds(1_700_000_000))

    static func record(_ address: String) -> MachineRecord {
        MachineRecord(address: address, type: "Counter", snapshot: Array(address.utf8), sequence: 2)
    }

    static func commit() -> StoreCommit {
        var commit = StoreCommit()
        commit.records = [record("counter/a"), record("counter/b")]
        commit.journal = [JournalEntry(address: "counter/a", sequence: 3, event: [1], time: 1),
                          JournalEntry(address: "counter/c", sequence: 7, event: [2], time: 1)]
        commit.truncations = [("counter/a", 2), ("counter/b", 2)]
        commit.removed = ["counter/a", "counter/d"]
        commit.deadLetters = [DeadLetter(address: "counter/a", type: "Counter", event: [1], binary: false, error: "died",
                                         crashes: 2, time: 1)]
        commit.flush = .disk
        return commit
    }

    // MARK: - The commit again, without the refused

    @Test func aRefusalNamingSomeMachinesLeavesOnlyTheirWritesOut() throws {
        var refusal = StoreError("worker pool-1 cannot write counter/a (owned by pool-2)", code: .rejected)
        refusal.refused = ["counter/a", "counter/zzz"]
        var commit = Self.commit()
        let key = IdempotencyKey(client: [7], sequence: 1)
        commit.forgottenAnswers = [("counter/a", key), ("counter/b", key)]
        let refused = try #require(commit.refusedAddresses(in: refusal))
        // Only what this commit writes: an address it does not name is no reason to retry.
        #expect(refused == ["counter/a"])
        let again = commit.excluding(refused)
        // The refused instance's idempotency keys go with it.
        #expect(again.forgottenAnswers.map(\.address) == ["counter/b"])
        #expect(again.records == [Self.record("counter/b")])
        #expect(again.journal.map(\.address) == ["counter/c"])
        #expect(again.truncations.map(\.address) == ["counter/b"])
        #expect(again.removed == ["counter/d"])
        // Dead letters are the worker's: they stay, as does the flush asked.
        #expect(again.deadLetters.count == 1)
        #expect(again.flush == .disk)
        #expect(again.addresses == ["counter/b", "counter/c", "counter/d"])
    }

    @Test func anyOtherFailureIsNoReasonToCommitAgain() {
        let commit = Self.commit()
        // A failure that names nothing, or nothing this commit writes, would fail again the same way.
        #expect(commit.refusedAddresses(in: StoreError("disk full", code: .full)) == nil)
        #expect(commit.refusedAddresses(in: StoreError("fenced", code: .fenced)) == nil)
        #expect(commit.refusedAddresses(in: StoreError("a journal entry not after the last", code: .rejected)) == nil)
        var elsewhere = StoreError("refused", code: .rejected)
        elsewhere.refused = ["other/x"]
        #expect(commit.refusedAddresses(in: elsewhere) == nil)
        // Refused on another code, addresses or not: not a handoff refusal.
        var fenced = StoreError("fenced", code: .fenced)
        fenced.refused = ["counter/a"]
        #expect(commit.refusedAddresses(in: fenced) == nil)
    }

    @Test func leavingOutEveryRefusedAddressEndsInACommitOfTheRest() throws {
        // The runtime's loop: each round leaves out at least one more address, so it ends.
        var commit = Self.commit()
        var rounds = 0
        for named in [["counter/a"], ["counter/b", "counter/c"], ["counter/d"]] {
            var refusal = StoreError("refused", code: .rejected)
            refusal.refused = named
            let refused = try #require(commit.refusedAddresses(in: refusal))
            commit = commit.excluding(refused)
            rounds += 1
        }
        #expect(rounds == 3)
        #expect(commit.addresses.isEmpty)
        #expect(commit.writeCount == 1, "the dead letter is left")
    }

    // MARK: - Moved away

    @Test func movedInstancesAreDroppedTheirTimersForgottenAndEachLoggedOnce() {
        var core = WorkerCore(worker: "pool-1", coordinator: "ipc://c", machineTypes: ["Counter"], now: .now)
        core.passivation.passivated("counter/a", wakeAt: wall + .seconds(10))
        core.passivation.passivated("counter/keep", wakeAt: wall + .seconds(20))

        let first = core.movedAway(["counter/b", "counter/a"], why: "the shared store refused this worker's write")
        #expect(first.first == .dropMoved(["counter/a", "counter/b"]))
        let lines = first.compactMap { action -> String? in
            guard case .log(let level, let line) = action else { return nil }
            #expect(level == .warning)
            return line
        }
        #expect(lines.count == 2)
        #expect(lines[0].contains("counter/a moved to another worker"), "\(lines[0])")
        #expect(lines[0].contains("the shared store refused this worker's write"))
        #expect(lines[0].contains("unavailable"))
        // Its wake timer is no longer this worker's; another's stays.
        #expect(core.passivation.waitingForTimers == 1)
        #expect(core.passivation.due(now: wall + .seconds(30)) == ["counter/keep"])

        // The same address again: dropped again (a copy made since), not logged again.
        let again = core.movedAway(["counter/a", "counter/c"], why: "again")
        #expect(again.first == .dropMoved(["counter/a", "counter/c"]))
        #expect(again.count == 2)
        guard case .log(_, let line) = again.last else {
            Issue.record("\(again)")
            return
        }
        #expect(line.contains("counter/c"))
        #expect(core.movedAway([], why: "nothing") == [])
    }

    @Test func whatIsLoggedStaysBounded() {
        var core = WorkerCore(worker: "pool-1", coordinator: "ipc://c", machineTypes: ["Counter"], now: .now)
        for index in 0..<(WorkerCore.movedToldCapacity + 10) { _ = core.movedAway(["counter/\(index)"], why: "test") }
        #expect(core.movedTold.count <= WorkerCore.movedToldCapacity)
    }

    // MARK: - Registered again

    func welcome(handoff: Bool?) throws -> [UInt8] {
        let machines = [Welcome.HostedMachine(name: "counter", type: "Counter", keyed: true, durability: .state, handoff: handoff)]
        return try WireJSON.encode(Welcome(machines: machines, remoteIO: [], heartbeatIntervalMs: 50, heartbeatTimeoutMs: 200,
                                           mailboxCapacity: 16))
    }

    @Test func aWelcomeAgainAsksWhichInstancesMovedWhenItsMachinesHandOff() throws {
        let now = ContinuousClock.now
        var core = WorkerCore(worker: "pool-1", coordinator: "ipc://c", machineTypes: ["Counter"], now: now)
        // The first welcome: nothing can have moved yet.
        #expect(!core.welcome(try welcome(handoff: true), now: now).contains(.checkOwnership))
        #expect(core.welcome(try welcome(handoff: true), now: now).contains(.checkOwnership))

        var plain = WorkerCore(worker: "pool-1", coordinator: "ipc://c", machineTypes: ["Counter"], now: now)
        _ = plain.welcome(try welcome(handoff: nil), now: now)
        #expect(!plain.welcome(try welcome(handoff: nil), now: now).contains(.checkOwnership))
    }
}
