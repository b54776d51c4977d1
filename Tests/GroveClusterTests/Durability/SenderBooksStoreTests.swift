@testable import GroveCluster
@testable import GroveWorker
import GroveWire
import Testing

/// Issue 34 (h37): an instance's 1,000 client books are shared among senders, and that holds
/// through a store (SQLite, PostgreSQL where a test server is given): the books come back with
/// their bound ids, so after a relaunch or a handoff a sender making client ids still forgets
/// only its own, and the store deletes only its own.
@Suite(.timeLimit(.minutes(2))) struct SenderBooksStoreTests {
    typealias Window = AnswerWindow<String>
    typealias F = StoreFixtures

    static func commit(_ window: inout Window, to store: any MachineStore, replacing: Bool = false) throws {
        let writes = window.takeWrites(replacingStored: replacing)
        var commit = F.commit(records: [F.record("counter/m", "1")])
        commit.answers = writes.answers.map { ("counter/m", $0) }
        commit.forgottenAnswers = writes.forgotten.map { ("counter/m", $0) }
        try store.commit(commit)
    }

    static func books(in store: any MachineStore) throws -> Set<[UInt8]> {
        Set(try store.answers(of: "counter/m").filter { $0.key.sequence == Window.sequencesMark }.map(\.key.client))
    }

    @Test(arguments: StoreKind.allCases) func aSenderMakingClientIdsAfterARelaunchForgetsOnlyItsOwn(kind: StoreKind) throws {
        let (store, cleanup) = try kind.make()
        defer { cleanup() }
        let alice = AnswerWindowSenderTests.bound("A", 0)
        let mallory = (0..<(Window.maximumClients + 50)).map { AnswerWindowSenderTests.bound("M", $0) }
        var window = Window()
        AnswerWindowSenderTests.applyOne([alice] + mallory.prefix(Window.maximumClients - 1), to: &window)
        try Self.commit(&window, to: store)
        #expect(try Self.books(in: store).count == Window.maximumClients)

        // Relaunched (or handed off): the window comes back from the store, and Mallory goes on.
        var restored = Window()
        restored.restore(try store.answers(of: "counter/m"))
        AnswerWindowSenderTests.applyOne(mallory.suffix(from: Window.maximumClients - 1), to: &restored)
        try Self.commit(&restored, to: store)
        let kept = try Self.books(in: store)
        #expect(kept.count == Window.maximumClients)
        #expect(kept.contains(alice))
        #expect(kept == Set([alice] + mallory.suffix(Window.maximumClients - 1)))

        var again = Window()
        again.restore(try store.answers(of: "counter/m"))
        guard case .appliedEarlier = again.admit(IdempotencyKey(client: alice, sequence: 1), waiter: "") else {
            Issue.record("Alice's late repeat is refused as applied after the store, not applied again"); return
        }
    }
}
