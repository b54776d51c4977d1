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
        #expect(first.answers.map(\.key) == (1...capacity).map { Self.key($0) })
        #expect(first.answers.map(\.slot) == Array(1...capacity))
        #expect(first.forgotten == [])
        // Two more: the two oldest leave, and the store is told to delete them.
        for sequence in (capacity + 1)...(capacity + 2) {
            _ = window.admit(Self.key(sequence), waiter: "")
            _ = window.answered(Self.key(sequence), with: Self.state("\(sequence)"))
        }
        #expect(window.count == Window.capacity)
        let second = window.takeWrites()
        #expect(second.answers.map(\.key) == [Self.key(capacity + 1), Self.key(capacity + 2)])
        #expect(second.forgotten == [Self.key(1), Self.key(2)])
        guard case .apply = window.admit(Self.key(1), waiter: "") else { Issue.record("a key past the window is applied again"); return }
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
        #expect(writes.answers.count == Window.capacity)
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
        #expect(window.takeWrites().answers == [AnswerEntry(key: Self.key(10), slot: 13, answer: Self.state("10"))])
        // Replacing what the store holds writes the whole window, oldest first.
        #expect(window.takeWrites(replacingStored: true).answers.map(\.slot) == [11, 12, 13])
    }
}
