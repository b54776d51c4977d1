@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// How a worker takes a quarantined event out of its machine's stored state, and which run it
/// counts: ``WorkerCore``'s rules fed what a store would return, with no store, thread or clock.
@Suite(.timeLimit(.minutes(2)))
struct WorkerCorePoisonTests {
    static let event = Array(#"{"add":{"_0":1}}"#.utf8)
    let run = RecordedRun(address: "ledger", event: Self.event, binary: false, origin: .sent)
    let record = MachineRecord(address: "ledger", type: "LedgerMachine", snapshot: [1, 2, 3], sequence: 4)
    let letter = DeadLetter(address: "ledger", type: "LedgerMachine", event: Self.event, binary: false, error: "died", crashes: 2, time: 7)
    let journal = [JournalEntry(address: "ledger", sequence: 5, event: [2] + Self.event, time: 1)]

    static func core(placing machines: [Welcome.HostedMachine] = [], flush: DurabilityFlush? = nil) -> WorkerCore {
        var core = WorkerCore(worker: "main", coordinator: "ipc://c", machineTypes: ["LedgerMachine"], now: .now)
        let welcome = Welcome(machines: machines, remoteIO: [], heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1000,
                              mailboxCapacity: 16, flush: flush)
        core.lastWelcome = welcome
        for machine in machines { core.placed[machine.name] = machine }
        return core
    }

    // MARK: - quarantinePlan

    @Test func aJournalWithEntriesAfterTheRecordSkipsTheEventThere() throws {
        var skipped = record
        skipped.snapshot = [9]
        skipped.sequence = 5
        let plan = Self.core(flush: .disk).quarantinePlan(run, letter: letter, crashes: 2, record: record, journal: journal,
                                                          codec: StubEventCodec(skipped: skipped, removed: [8]))
        #expect(plan.taken == .fromJournal)
        #expect(plan.record == skipped)
        #expect(plan.commit.records == [skipped])
        #expect(plan.commit.truncations.map(\.address) == ["ledger"] && plan.commit.truncations.map(\.through) == [5],
                "the entries up to the skipped event are covered by the record")
        #expect(plan.commit.deadLetters == [letter])
        #expect(plan.commit.flush == .disk, "the welcome's flush")
        #expect(plan.line.contains("2 times; skipped in its journal. "), "\(plan.line)")
    }

    @Test func aJournalThatDoesNotHoldTheEventLeavesTheRecordAlone() {
        // The record's queue holds the journal's events: rewriting it would not stop the replay.
        let plan = Self.core().quarantinePlan(run, letter: letter, crashes: 2, record: record, journal: journal,
                                              codec: StubEventCodec(skipped: nil, removed: [8]))
        #expect(plan.taken == .nothing)
        #expect(plan.record == nil && plan.commit.records.isEmpty && plan.commit.truncations.isEmpty)
        #expect(plan.commit.deadLetters == [letter], "the dead letter alone refuses it")
    }

    @Test func withoutJournalEntriesTheEventIsTakenOutOfTheRecord() {
        let codec = StubEventCodec(removedFromWork: [7], removed: [8])
        let plan = Self.core().quarantinePlan(run, letter: letter, crashes: 3, record: record, journal: [], codec: codec)
        var removed = record
        removed.snapshot = [8]
        #expect(plan.taken == .fromRecord)
        #expect(plan.record == removed && plan.commit.records == [removed])
        #expect(plan.commit.truncations.isEmpty)
        #expect(plan.commit.flush == .process, "the default without a welcome's flush")
        #expect(plan.line.contains("3 times; taken out of its stored record. "), "\(plan.line)")

        var fromWork = run
        fromWork.origin = .effect
        let work = Self.core().quarantinePlan(fromWork, letter: letter, crashes: 2, record: record, journal: [], codec: codec)
        #expect(work.record?.snapshot == [7], "an event of the machine's work is looked for in its work (re-issued io)")
    }

    @Test func nothingIsTakenOutWhenTheRecordDoesNotHoldTheEvent() {
        let plan = Self.core().quarantinePlan(run, letter: letter, crashes: 2, record: record, journal: [], codec: StubEventCodec())
        #expect(plan.taken == .nothing && plan.record == nil && plan.commit.records.isEmpty)
        #expect(plan.line.contains("2 times. The machine continues"), "\(plan.line)")
    }

    @Test func withoutARecordOrItsTypeOnlyTheDeadLetterIsWritten() {
        let codec = StubEventCodec(skipped: record, removed: [8])
        let unstored = Self.core().quarantinePlan(run, letter: letter, crashes: 2, record: nil, journal: [], codec: codec)
        #expect(unstored.taken == .nothing && unstored.commit.records.isEmpty && unstored.commit.deadLetters == [letter])
        let unknownType = Self.core().quarantinePlan(run, letter: letter, crashes: 2, record: record, journal: journal, codec: nil)
        #expect(unknownType.taken == .nothing && unknownType.commit.records.isEmpty && unknownType.commit.deadLetters == [letter])
    }

    // MARK: - which run is counted, and as what

    @Test func onlyAStoredOrDurableMachinesRunIsCounted() {
        let durable = Welcome.HostedMachine(name: "ledger", type: "LedgerMachine", keyed: false, durability: .state)
        let plain = Welcome.HostedMachine(name: "ledger", type: "LedgerMachine", keyed: false)
        #expect(Self.core(placing: [durable]).countsCrash(of: run, records: []))
        #expect(!Self.core(placing: [plain]).countsCrash(of: run, records: []), "its crash was reported with the registration")
        #expect(Self.core(placing: [plain]).countsCrash(of: run, records: [record]), "a record left from before counts")
        var instance = run
        instance.address = "ledger/7"
        #expect(Self.core(placing: [Welcome.HostedMachine(name: "ledger", type: "LedgerMachine", keyed: true, durability: .journal)])
            .countsCrash(of: instance, records: []), "a keyed instance by its machine's placement")
    }

    @Test func theTypeIsThePlacementsElseTheRecords() {
        let placed = Welcome.HostedMachine(name: "ledger", type: "Placed", keyed: false)
        #expect(Self.core(placing: [placed]).machineType(at: "ledger", records: [record]) == "Placed")
        #expect(Self.core().machineType(at: "ledger", records: [record]) == "LedgerMachine")
        #expect(Self.core().machineType(at: "other", records: [record]) == nil)
    }

    @Test func theRunIsBlamedAsItsTypeEncodesTheEvent() {
        let core = Self.core()
        let canonical = core.canonical(run, type: "LedgerMachine", codec: StubEventCodec(canonicalEvent: ([0xA1], true)))
        #expect(canonical.warning == nil)
        #expect(canonical.run.event == [0xA1] && canonical.run.binary)

        let unknown = core.canonical(run, type: nil, codec: nil)
        #expect(unknown.run == run)
        #expect(unknown.warning == "worker main does not know the type of ledger; the event it died running is blamed as recorded")
        #expect(core.canonical(run, type: "LedgerMachine", codec: nil).warning == unknown.warning, "a type not registered here")

        let changed = core.canonical(run, type: "LedgerMachine", codec: StubEventCodec())
        #expect(changed.run == run)
        #expect(changed.warning == "the event worker main died running on ledger no longer decodes as a LedgerMachine event; blamed as recorded")

        var unrecorded = run
        unrecorded.event = []
        let empty = core.canonical(unrecorded, type: nil, codec: nil)
        #expect(empty.run == unrecorded && empty.warning == nil, "nothing to make canonical, nothing to warn of")
    }
}
