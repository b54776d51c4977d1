@testable import GroveCluster
@testable import GroveWorker
import Testing

/// Handoff's fence in the shared store (issue 37): a worker adopting a keyed instance claims
/// it, and the worker that held it can no longer write its record or its journal.
@Suite(.timeLimit(.minutes(2)), .enabled(if: PostgresTestServer.isAvailable, PostgresTestServer.skipReason))
struct PostgresHandoffStoreTests {
    typealias F = StoreFixtures

    private func open(_ topology: String, _ worker: String) throws -> PostgresMachineStore {
        try PostgresMachineStore(location: #require(PostgresTestServer.location), topology: topology, worker: worker)
    }

    @Test func aClaimTakesTheRecordAndFencesItsFormerOwner() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let lost = try open(topology, "pool-1")
        let adopter = try open(topology, "pool-2")
        defer { lost.close(); adopter.close() }
        try lost.commit(F.commit(records: [F.record("counter/a", "1", sequence: 1), F.record("counter/b", "1", sequence: 1)]))

        #expect(try adopter.claim("counter/a") == F.record("counter/a", "1", sequence: 1))
        #expect(try adopter.records() == [F.record("counter/a", "1", sequence: 1)])
        #expect(try lost.records() == [F.record("counter/b", "1", sequence: 1)])

        // The paused worker wakes and writes what it still holds: refused, and nothing of that
        // commit is kept (its other machine included).
        let write = #expect(throws: StoreError.self) {
            try lost.commit(F.commit(records: [F.record("counter/b", "2", sequence: 2), F.record("counter/a", "stale", sequence: 2)]))
        }
        #expect(write?.code == .rejected)
        #expect(write?.message.contains("counter/a (owned by pool-2)") == true, "\(write?.message ?? "")")
        let append = #expect(throws: StoreError.self) { try lost.commit(F.commit(journal: [F.entry("counter/a", 2)])) }
        #expect(append?.code == .rejected)
        #expect(append?.message.contains("counter/a (owned by pool-2)") == true, "\(append?.message ?? "")")
        #expect(try adopter.journal(of: "counter/a", after: 1) == [])
        #expect(try lost.records() == [F.record("counter/b", "1", sequence: 1)])

        // The adopter writes on; its own machines are untouched by the refusal.
        try adopter.commit(F.commit(records: [F.record("counter/a", "2", sequence: 2)]))
        #expect(try adopter.record(of: "counter/a") == F.record("counter/a", "2", sequence: 2))
    }

    @Test func theHandedBackMachinesWithWorkDueAreFoundWhoeverOwnsThem() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let home = try open(topology, "pool-1")
        let adopter = try open(topology, "pool-2")
        defer { home.close(); adopter.close() }
        // A record of its state alone rests; one with more (a timer, say) has work due.
        let resting = MachineRecord(address: "counter/rest", type: "Counter", snapshot: [DurableRecord.stateAloneCodec, 1, 2])
        try adopter.commit(F.commit(records: [F.record("counter/timer", "1", sequence: 1), resting, F.record("counter/other", "1")]))
        #expect(try home.withWorkDue(among: ["counter/rest", "counter/timer", "counter/never"]) == ["counter/timer"])
        #expect(try home.withWorkDue(among: []) == [])
        // Taken back: a claim, as for an event.
        #expect(try home.claim("counter/timer") == F.record("counter/timer", "1", sequence: 1))
    }

    @Test func aRefusalNamesEveryMovedMachineAndTheRestCommitsWithoutThem() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let lost = try open(topology, "pool-1")
        let adopter = try open(topology, "pool-2")
        defer { lost.close(); adopter.close() }
        try lost.commit(F.commit(records: [F.record("counter/a", "1", sequence: 1), F.record("counter/b", "1", sequence: 1),
                                           F.record("counter/c", "1", sequence: 1)]))
        _ = try adopter.claim("counter/a")
        _ = try adopter.claim("counter/c")
        #expect(try lost.movedAway(among: ["counter/a", "counter/b", "counter/c", "counter/never"]) == ["counter/a", "counter/c"])
        #expect(try adopter.movedAway(among: ["counter/a", "counter/b"]) == ["counter/b"])

        // Records of a and b, a journal entry of c: every moved address is named, none written.
        var stale = F.commit(records: [F.record("counter/a", "stale", sequence: 2), F.record("counter/b", "2", sequence: 2)],
                             journal: [F.entry("counter/c", 2)])
        let refusal = #expect(throws: StoreError.self) { try lost.commit(stale) }
        #expect(refusal?.code == .rejected)
        #expect(refusal?.refused == ["counter/a", "counter/c"])
        #expect(refusal?.message.contains("counter/c (owned by pool-2)") == true, "\(refusal?.message ?? "")")
        #expect(try lost.record(of: "counter/b") == F.record("counter/b", "1", sequence: 1))

        // Again without them: b's write lands, the adopter's machines are untouched.
        stale = stale.excluding(Set(try #require(refusal).refused))
        try lost.commit(stale)
        #expect(try lost.records() == [F.record("counter/b", "2", sequence: 2)])
        #expect(try adopter.records() == [F.record("counter/a", "1", sequence: 1), F.record("counter/c", "1", sequence: 1)])
        #expect(try adopter.journal(of: "counter/c", after: 1) == [])
    }

    @Test func claimingBackRestoresTheOwnerAndFencesTheAdopter() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let home = try open(topology, "pool-1")
        let adopter = try open(topology, "pool-2")
        defer { home.close(); adopter.close() }
        try home.commit(F.commit(records: [F.record("counter/a", "1", sequence: 1)]))
        _ = try adopter.claim("counter/a")
        try adopter.commit(F.commit(records: [F.record("counter/a", "2", sequence: 2)]))

        #expect(try home.claim("counter/a") == F.record("counter/a", "2", sequence: 2))
        let error = #expect(throws: StoreError.self) { try adopter.commit(F.commit(records: [F.record("counter/a", "3", sequence: 3)])) }
        #expect(error?.code == .rejected)
        #expect(try home.records() == [F.record("counter/a", "2", sequence: 2)])
    }

    /// Every turn that spawns an instance of a handoff machine claims it: a claim of a record
    /// the worker owns already returns it and leaves it as it was (`grove_claim_v2` takes no
    /// lock then; the fence still refuses a newer owner's record to a stale process, below).
    @Test func aClaimOfItsOwnRecordReturnsItUnchanged() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let owner = try open(topology, "pool-1")
        let other = try open(topology, "pool-2")
        defer { owner.close(); other.close() }
        try owner.commit(F.commit(records: [F.record("counter/a", "1", sequence: 1)]))
        #expect(try owner.claim("counter/a") == F.record("counter/a", "1", sequence: 1))
        #expect(try owner.claim("counter/a") == F.record("counter/a", "1", sequence: 1))
        try owner.commit(F.commit(records: [F.record("counter/a", "2", sequence: 2)]))
        #expect(try owner.records() == [F.record("counter/a", "2", sequence: 2)])
        #expect(try other.records() == [])
    }

    @Test func aClaimOfNothingIsNilAndAFencedProcessClaimsNothing() throws {
        let topology = PostgresTestServer.freshTopology()
        defer { PostgresTestServer.drop(topology) }
        let old = try open(topology, "pool-2")
        defer { old.close() }
        #expect(try old.claim("counter/never") == nil)
        let owner = try open(topology, "pool-1")
        defer { owner.close() }
        try owner.commit(F.commit(records: [F.record("counter/a", "1", sequence: 1)]))
        let newer = try open(topology, "pool-2")
        defer { newer.close() }
        let error = #expect(throws: StoreError.self) { try old.claim("counter/a") }
        #expect(error?.code == .fenced)
        #expect(try owner.records() == [F.record("counter/a", "1", sequence: 1)])
    }
}
