import GroveWire
@testable import GroveWorker
import Testing

/// The pure window of idempotency keys an instance keeps (``AnswerWindow``): fed keys and
/// answers, its admissions and writes checked, no socket and no store.
@Suite(.timeLimit(.minutes(2))) struct AnswerWindowTests {
    typealias Window = AnswerWindow<String>

    static func key(_ sequence: UInt64, client: UInt8 = 1) -> IdempotencyKey {
        IdempotencyKey(client: [client, 0xC1], sequence: sequence)
    }

    static func state(_ text: String) -> KeptAnswer { KeptAnswer(kind: .state, payload: Array(text.utf8)) }

    @Test func aRepeatIsAnsweredWithTheFirstAnswerAndNotAppliedAgain() {
        var window = Window()
        guard case .apply = window.admit(Self.key(1), waiter: "first") else { Issue.record("a new key is applied"); return }
        #expect(window.answered(Self.key(1), with: Self.state("1")) == [])
        guard case .answer(let answer) = window.admit(Self.key(1), waiter: "retry") else { Issue.record("a repeat is answered"); return }
        #expect(answer == Self.state("1"))
        // Another client's same sequence is another key.
        guard case .apply = window.admit(Self.key(1, client: 2), waiter: "other") else { Issue.record("another client's key"); return }
    }

    @Test func aRepeatWhileTheFirstRunsWaitsForItsAnswer() {
        var window = Window()
        guard case .apply = window.admit(Self.key(5), waiter: "first") else { Issue.record("applied"); return }
        guard case .wait = window.admit(Self.key(5), waiter: "retry-1") else { Issue.record("waits"); return }
        guard case .wait = window.admit(Self.key(5), waiter: "retry-2") else { Issue.record("waits"); return }
        #expect(window.answered(Self.key(5), with: Self.state("5")) == ["retry-1", "retry-2"])
        guard case .answer(let answer) = window.admit(Self.key(5), waiter: "late") else { Issue.record("answered"); return }
        #expect(answer == Self.state("5"))
    }

    @Test func aRefusedEventKeepsNothingAndItsRepeatIsApplied() {
        var window = Window()
        _ = window.admit(Self.key(3), waiter: "first")
        guard case .wait = window.admit(Self.key(3), waiter: "retry") else { Issue.record("waits"); return }
        #expect(window.refused(Self.key(3)) == ["retry"])
        guard case .apply = window.admit(Self.key(3), waiter: "again") else { Issue.record("applied once refused"); return }
        #expect(window.count == 0)
        #expect(!window.hasWrites)
    }

    @Test func theWindowKeepsTheLastCapacityKeysAndWritesWhatLeaves() {
        var window = Window()
        let capacity = UInt64(Window.capacity)
        for sequence in 1...capacity {
            _ = window.admit(Self.key(sequence), waiter: "")
            _ = window.answered(Self.key(sequence), with: Self.state("\(sequence)"))
        }
        let first = window.takeWrites()
        #expect(Self.answers(first.answers).map(\.key) == (1...capacity).map { Self.key($0) })
        #expect(Self.answers(first.answers).map(\.slot) == Array(1...capacity))
        #expect(first.forgotten == [])
        // Two more: the two oldest leave, and the store is told to delete them.
        for sequence in (capacity + 1)...(capacity + 2) {
            _ = window.admit(Self.key(sequence), waiter: "")
            _ = window.answered(Self.key(sequence), with: Self.state("\(sequence)"))
        }
        #expect(window.count == Window.capacity)
        let second = window.takeWrites()
        #expect(Self.answers(second.answers).map(\.key) == [Self.key(capacity + 1), Self.key(capacity + 2)])
        #expect(second.forgotten == [Self.key(1), Self.key(2)])
        // Past its answer, a repeat is still told from a new event, and applied no more.
        guard case .appliedEarlier = window.admit(Self.key(1), waiter: "") else { Issue.record("a key past the window is refused"); return }
        guard case .answer = window.admit(Self.key(3), waiter: "") else { Issue.record("the oldest kept key is answered"); return }
        #expect(!window.hasWrites)
    }

    @Test func aKeyAnsweredAndLeftBeforeAnyWriteIsNeverWrittenNorDeleted() {
        var window = Window()
        for sequence in 1...UInt64(Window.capacity + 3) {
            _ = window.admit(Self.key(sequence), waiter: "")
            _ = window.answered(Self.key(sequence), with: Self.state("\(sequence)"))
        }
        let writes = window.takeWrites()
        #expect(Self.answers(writes.answers).count == Window.capacity)
        #expect(writes.answers.first?.key == Self.key(4))
        #expect(writes.forgotten == [])
    }

    @Test func aRestoredWindowAnswersItsKeysAndContinuesItsSlots() {
        var window = Window()
        let stored = [
            AnswerEntry(key: Self.key(9), slot: 12, answer: Self.state("9")),
            AnswerEntry(key: Self.key(8), slot: 11, answer: Self.state("8")),
        ]
        window.restore(stored)
        #expect(!window.hasWrites)
        guard case .answer(let answer) = window.admit(Self.key(8), waiter: "") else { Issue.record("restored key answered"); return }
        #expect(answer == Self.state("8"))
        _ = window.admit(Self.key(10), waiter: "")
        _ = window.answered(Self.key(10), with: Self.state("10"))
        #expect(Self.answers(window.takeWrites().answers) == [AnswerEntry(key: Self.key(10), slot: 13, answer: Self.state("10"))])
        // Replacing what the store holds writes the whole window, oldest first.
        #expect(Self.answers(window.takeWrites(replacingStored: true).answers).map(\.slot) == [11, 12, 13])
    }

    @Test func answersAreKeptWithinABudgetOfBytesAndOneLargerThanItIsNotKept() {
        var window = Window()
        let third = Window.maximumBytes / 3
        let big = KeptAnswer(kind: .state, payload: Array(repeating: 7, count: third))
        for sequence: UInt64 in 1...4 {
            _ = window.admit(Self.key(sequence), waiter: "")
            _ = window.answered(Self.key(sequence), with: big)
        }
        // Three fit, the fourth pushed out the first.
        #expect(window.count == 3)
        guard case .appliedEarlier = window.admit(Self.key(1), waiter: "") else { Issue.record("1's answer is gone"); return }
        guard case .answer = window.admit(Self.key(2), waiter: "") else { Issue.record("2's answer is kept"); return }
        // An answer over the budget alone is not kept, and pushes nothing out; its repeat is
        // still not applied.
        let huge = KeptAnswer(kind: .state, payload: Array(repeating: 7, count: Window.maximumBytes + 1))
        _ = window.admit(Self.key(5), waiter: "")
        _ = window.answered(Self.key(5), with: huge)
        #expect(window.count == 3)
        guard case .appliedEarlier = window.admit(Self.key(5), waiter: "") else { Issue.record("5 ran: refused"); return }
    }

    /// The entries that are answers, not a client's sequences.
    static func answers(_ entries: [AnswerEntry]) -> [AnswerEntry] {
        entries.filter { $0.key.sequence != Window.sequencesMark }
    }

    /// The entries that are clients' sequences, read back.
    static func sequences(_ entries: [AnswerEntry]) -> [[UInt8]: ClientSequences] {
        Dictionary(entries.filter { $0.key.sequence == Window.sequencesMark }.map { ($0.key.client, ClientSequences(encoded: $0.answer.payload)!) },
                   uniquingKeysWith: { $1 })
    }

    static func apply(_ sequences: some Sequence<UInt64>, client: UInt8 = 1, to window: inout Window) {
        for sequence in sequences {
            guard case .apply = window.admit(Self.key(sequence, client: client), waiter: "") else {
                Issue.record("key \(sequence) of client \(client) is new")
                continue
            }
            _ = window.answered(Self.key(sequence, client: client), with: Self.state("\(sequence)"))
        }
    }

    /// The bug issue 37's kill-twice run found: a retry that came back after more newer keys
    /// than the window keeps answers for was applied a second time, in memory and after a
    /// restore from the store.
    @Test func aRepeatLongAfterItsAnswerLeftIsNeverAppliedAgainEvenAfterARestore() {
        var window = Window()
        // 3 and 4 were lost with a worker before they ran; the rest ran.
        Self.apply([1, 2] + Array(5...1_000), to: &window)
        var store: [IdempotencyKey: AnswerEntry] = [:]
        let writes = window.takeWrites()
        for key in writes.forgotten { store[key] = nil }
        for entry in writes.answers { store[entry.key] = entry }
        #expect(Self.answers(Array(store.values)).count == Window.capacity)
        #expect(Self.sequences(Array(store.values))[[1, 0xC1]]?.gaps == [3...4])

        var restored = Window()
        restored.restore(Array(store.values))
        guard case .appliedEarlier = restored.admit(Self.key(1), waiter: "") else { Issue.record("1 ran: refused"); return }
        guard case .appliedEarlier = restored.admit(Self.key(700), waiter: "") else { Issue.record("700 ran: refused"); return }
        guard case .answer = restored.admit(Self.key(999), waiter: "") else { Issue.record("999's answer is kept"); return }
        // The lost ones were never applied: their copies are, once.
        Self.apply([4, 3], to: &restored)
        guard case .appliedEarlier = restored.admit(Self.key(3), waiter: "") else { return }
        let after = Self.sequences(restored.takeWrites().answers)[[1, 0xC1]]
        #expect(after?.gaps == [] && after?.highest == 1_000)
    }

    @Test func aClientsSequencesAreWrittenWhenTheyChangeAndGoWhenTheClientIsForgotten() {
        var window = Window()
        func client(_ index: Int) -> [UInt8] { [UInt8(index & 0xFF), UInt8(index >> 8)] }
        func applyOne(_ index: Int) {
            _ = window.admit(IdempotencyKey(client: client(index), sequence: 1), waiter: "")
            _ = window.answered(IdempotencyKey(client: client(index), sequence: 1), with: Self.state(""))
        }
        applyOne(0)
        #expect(Set(Self.sequences(window.takeWrites().answers).keys) == [client(0)])
        #expect(!window.hasWrites)
        for index in 1...Window.maximumClients { applyOne(index) }
        // Client 0, the least lately used, is forgotten: its stored sequences are deleted.
        let writes = window.takeWrites()
        #expect(writes.forgotten.filter { $0.sequence == Window.sequencesMark } == [IdempotencyKey(client: client(0), sequence: Window.sequencesMark)])
        #expect(Self.sequences(writes.answers).count == Window.maximumClients)
        // Forgotten, and its answer gone too, its repeat is applied again: the documented bound.
        guard case .apply = window.admit(IdempotencyKey(client: client(0), sequence: 1), waiter: "") else {
            Issue.record("a forgotten client's key is new"); return
        }
    }

    @Test func aKeyUnderWhatTheClientsSequencesStillTellIsRefusedNotApplied() {
        var window = Window()
        // Every other sequence lost: each leaves a gap, and the oldest gaps are given up.
        Self.apply(stride(from: 2, through: UInt64(2 * ClientSequences.maximumGaps + 10), by: 2), to: &window)
        guard case .tooOld = window.admit(Self.key(1), waiter: "") else { Issue.record("the oldest gap is given up"); return }
        guard case .apply = window.admit(Self.key(UInt64(2 * ClientSequences.maximumGaps + 9)), waiter: "") else {
            Issue.record("a recent gap is still told"); return
        }
    }
}
