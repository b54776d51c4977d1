@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// What every ``MachineStore`` promises, run against SQLite and its in-memory twin alike.
@Suite(.timeLimit(.minutes(2))) struct MachineStoreTests {
    typealias F = StoreFixtures

    @Test(arguments: StoreKind.allCases) func recordsJournalAndDeadLettersComeBackAsWritten(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        let letter = F.letter("poller/eu")
        try store.commit(F.commit(
            records: [F.record("counter/b", "2", sequence: 2), F.record("auth", "signed-in", type: "AuthFlow")],
            journal: [F.entry("counter/b", 1), F.entry("counter/b", 2, "reset")],
            deadLetters: [letter]))

        #expect(try store.records() == [F.record("auth", "signed-in", type: "AuthFlow"), F.record("counter/b", "2", sequence: 2)])
        #expect(try store.journal(of: "counter/b", after: 0) == [F.entry("counter/b", 1), F.entry("counter/b", 2, "reset")])
        #expect(try store.journal(of: "auth", after: 0) == [])
        let letters = try store.deadLetters()
        #expect(letters.count == 1)
        var stored = try #require(letters.first)
        #expect(stored.id != nil)
        stored.id = nil
        #expect(stored == letter)
    }

    static func answer(_ sequence: UInt64, slot: UInt64, _ state: String, client: UInt8 = 1) -> AnswerEntry {
        AnswerEntry(key: IdempotencyKey(client: [client, 0x77], sequence: sequence), slot: slot,
                    answer: KeptAnswer(kind: .state, flags: [.binary, .unhandled], payload: Array(state.utf8)))
    }

    @Test(arguments: StoreKind.allCases) func answersAreKeptWithTheStateInOneCommitAndForgottenByKey(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        var commit = F.commit(records: [F.record("counter/a", "2"), F.record("counter/b", "5")])
        commit.answers = [("counter/a", Self.answer(1, slot: 1, "1")), ("counter/a", Self.answer(2, slot: 2, "2")),
                          ("counter/b", Self.answer(1, slot: 1, "5", client: 2))]
        try store.commit(commit)
        #expect(Set(try store.answers(of: "counter/a")) == [Self.answer(1, slot: 1, "1"), Self.answer(2, slot: 2, "2")])
        #expect(try store.answers(of: "counter/b") == [Self.answer(1, slot: 1, "5", client: 2)])
        #expect(try store.answers(of: "counter/none") == [])

        var next = F.commit(records: [F.record("counter/a", "3")])
        next.forgottenAnswers = [("counter/a", IdempotencyKey(client: [1, 0x77], sequence: 1))]
        next.answers = [("counter/a", Self.answer(3, slot: 3, "3"))]
        try store.commit(next)
        #expect(Set(try store.answers(of: "counter/a")) == [Self.answer(2, slot: 2, "2"), Self.answer(3, slot: 3, "3")])
        #expect(try store.answers(of: "counter/b") == [Self.answer(1, slot: 1, "5", client: 2)])
    }

    /// Keys bound to their sender (issue 34: a client key's Z85 text in front of the client id,
    /// up to ``IdempotencyKey/maximumBoundClientLength`` bytes) come back as written, so a
    /// relaunch or a handoff (another worker reading PostgreSQL) tells the same sender's repeats,
    /// and not another's with the same client id and sequence. A store that read back only ids
    /// a client may send (64 bytes) would drop the longer ones, and their repeats would apply again.
    @Test(arguments: StoreKind.allCases) func answersUnderBoundClientIdsComeBackAsWritten(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        let alice = Array(String(repeating: "A", count: IdempotencyKey.senderLength).utf8)
        let mallory = Array(String(repeating: "M", count: IdempotencyKey.senderLength).utf8)
        let client = Array(repeating: UInt8(0x5A), count: IdempotencyKey.maximumClientLength)
        func entry(_ sender: [UInt8], slot: UInt64, _ state: String) -> AnswerEntry {
            AnswerEntry(key: IdempotencyKey(client: sender + client, sequence: 1), slot: slot,
                        answer: KeptAnswer(kind: .state, payload: Array(state.utf8)))
        }
        var commit = F.commit(records: [F.record("counter/a", "101")])
        commit.answers = [("counter/a", entry(mallory, slot: 1, "100")), ("counter/a", entry(alice, slot: 2, "101"))]
        try store.commit(commit)
        let read = try store.answers(of: "counter/a")
        #expect(Set(read) == [entry(mallory, slot: 1, "100"), entry(alice, slot: 2, "101")])
        #expect(read.allSatisfy { $0.key.client.count == IdempotencyKey.maximumBoundClientLength })
    }

    @Test(arguments: StoreKind.allCases) func aRemovedMachineLosesItsAnswersUnlessTheCommitKeepsNewOnes(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        var commit = F.commit(records: [F.record("counter/a", "1"), F.record("counter/b", "1")])
        commit.answers = [("counter/a", Self.answer(1, slot: 1, "1")), ("counter/b", Self.answer(1, slot: 1, "1"))]
        try store.commit(commit)
        try store.commit(F.commit(removed: ["counter/a"]))
        #expect(try store.answers(of: "counter/a") == [])
        #expect(try store.answers(of: "counter/b") == [Self.answer(1, slot: 1, "1")])
        // Removed and written again in one commit (a journal machine's first record): its new answers stay.
        var again = F.commit(records: [F.record("counter/b", "9")], removed: ["counter/b"])
        again.answers = [("counter/b", Self.answer(7, slot: 2, "9"))]
        try store.commit(again)
        #expect(try store.answers(of: "counter/b") == [Self.answer(7, slot: 2, "9")])
    }

    @Test(arguments: StoreKind.allCases) func aFailedCommitKeepsNoAnswer(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(journal: [F.entry("counter/a", 1)]))
        var bad = F.commit(journal: [F.entry("counter/a", 1)])
        bad.answers = [("counter/a", Self.answer(1, slot: 1, "1"))]
        #expect(throws: StoreError.self) { try store.commit(bad) }
        #expect(try store.answers(of: "counter/a") == [])
    }

    @Test(arguments: StoreKind.allCases) func aRecordIsReplacedByAddress(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(records: [F.record("counter/a", "1", sequence: 1), F.record("counter/b", "7")]))
        try store.commit(F.commit(records: [F.record("counter/a", "25", sequence: 9, type: "Renamed")]))
        #expect(try store.records() == [F.record("counter/a", "25", sequence: 9, type: "Renamed"), F.record("counter/b", "7")])
    }

    @Test(arguments: StoreKind.allCases) func oneRecordIsReadByItsAddress(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(records: [F.record("counter/a", "1", sequence: 4), F.record("counter/b", "7")]))
        #expect(try store.record(of: "counter/a") == F.record("counter/a", "1", sequence: 4))
        #expect(try store.record(of: "counter/none") == nil)
        try store.commit(F.commit(removed: ["counter/a"]))
        #expect(try store.record(of: "counter/a") == nil)
    }

    @Test(arguments: StoreKind.allCases) func theJournalIsReadAfterASequence(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(journal: (1...5).map { F.entry("counter/a", $0) } + [F.entry("counter/b", 4)]))
        #expect(try store.journal(of: "counter/a", after: 3).map(\.sequence) == [4, 5])
        #expect(try store.journal(of: "counter/a", after: 5) == [])
        #expect(try store.journal(of: "counter/b", after: 3) == [F.entry("counter/b", 4)])
    }

    @Test(arguments: StoreKind.allCases) func aTruncationDeletesOnlyThroughItsSequenceOfItsMachine(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(journal: (1...5).map { F.entry("counter/a", $0) } + (1...3).map { F.entry("counter/b", $0) }))
        try store.commit(F.commit(records: [F.record("counter/a", "3", sequence: 3)], truncations: [("counter/a", 3)]))
        #expect(try store.journal(of: "counter/a", after: 0).map(\.sequence) == [4, 5])
        #expect(try store.journal(of: "counter/b", after: 0).map(\.sequence) == [1, 2, 3])
    }

    @Test(arguments: StoreKind.allCases) func aRemovedMachineLosesRecordAndJournalAndNoOtherDoes(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(
            records: [F.record("counter/a", "1", sequence: 1), F.record("counter/b", "2", sequence: 1)],
            journal: [F.entry("counter/a", 1), F.entry("counter/a", 2), F.entry("counter/b", 1)]))
        try store.commit(F.commit(removed: ["counter/a"]))
        #expect(try store.records() == [F.record("counter/b", "2", sequence: 1)])
        #expect(try store.journal(of: "counter/a", after: 0) == [])
        #expect(try store.journal(of: "counter/b", after: 0) == [F.entry("counter/b", 1)])
    }

    @Test(arguments: StoreKind.allCases) func aCommitAppliesItsPartsInTheDocumentedOrder(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(records: [F.record("counter/a", "old")], journal: [F.entry("counter/a", 1)]))
        // Removed and created again in one batch; a snapshot that covers the entries written with it.
        try store.commit(F.commit(
            records: [F.record("counter/a", "new", sequence: 2)],
            journal: [F.entry("counter/a", 1), F.entry("counter/a", 2), F.entry("counter/a", 3)],
            truncations: [("counter/a", 2)], removed: ["counter/a"]))
        #expect(try store.records() == [F.record("counter/a", "new", sequence: 2)])
        #expect(try store.journal(of: "counter/a", after: 0) == [F.entry("counter/a", 3)])
    }

    @Test(arguments: StoreKind.allCases) func aCommitThatFailsPartWayLeavesNothingOfIt(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        // A record before its first event (sequence 0), then that event: live whatever the store
        // keeps of entries a record includes.
        try store.commit(F.commit(records: [F.record("counter/a", "1", sequence: 0)], journal: [F.entry("counter/a", 1)]))
        // Every part before the journal entry written twice succeeds on its own.
        let failing = F.commit(
            records: [F.record("counter/a", "2", sequence: 2), F.record("counter/z", "new")],
            journal: [F.entry("counter/a", 2), F.entry("counter/a", 1, "again")],
            removed: ["counter/gone"], deadLetters: [F.letter("counter/a")])
        let error = #expect(throws: StoreError.self) { try store.commit(failing) }
        #expect(error?.code == .rejected)
        #expect(try store.records() == [F.record("counter/a", "1", sequence: 0)])
        #expect(try store.journal(of: "counter/a", after: 0) == [F.entry("counter/a", 1)])
        #expect(try store.deadLetters() == [])
        // And the store goes on working.
        try store.commit(F.commit(journal: [F.entry("counter/a", 2)]))
        #expect(try store.journal(of: "counter/a", after: 1) == [F.entry("counter/a", 2)])
    }

    @Test(arguments: StoreKind.allCases) func aDeadLetterIsRemovedByIdOnce(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(F.commit(deadLetters: [F.letter("counter/a"), F.letter("counter/b")]))
        let ids = try store.deadLetters().compactMap(\.id)
        #expect(ids.count == 2 && ids[0] < ids[1])
        let removed = try store.removeDeadLetter(ids[0])
        #expect(removed?.address == "counter/a" && removed?.id == ids[0])
        #expect(try store.removeDeadLetter(ids[0]) == nil)
        #expect(try store.deadLetters().map(\.address) == ["counter/b"])
        // An id once shown is never given to another event.
        try store.commit(F.commit(deadLetters: [F.letter("counter/c")]))
        let newest = try #require(try store.deadLetters().first { $0.address == "counter/c" }?.id)
        #expect(newest > ids[1])
    }

    @Test(arguments: StoreKind.allCases) func anEmptyCommitChangesNothing(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        try store.commit(StoreCommit())
        #expect(try store.records() == [])
    }
}
