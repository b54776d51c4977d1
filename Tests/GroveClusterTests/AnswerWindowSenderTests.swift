import GroveWire
@testable import GroveWorker
import Testing

/// Issue 34, left open by h34: which client's sequences an instance forgets when it holds
/// ``AnswerWindow/maximumClients`` and a new client comes. A client key that makes client ids
/// without end must forget only its own, never another key's (whose late repeat would then be
/// applied twice). Pure: keys fed to the window, its admissions and writes read.
@Suite(.timeLimit(.minutes(2))) struct AnswerWindowSenderTests {
    typealias Window = AnswerWindow<String>

    /// A client id bound to a sender: 40 bytes of the sender's letter (a Z85 key's length), then
    /// the client's own two bytes.
    static func bound(_ sender: Character, _ index: Int) -> [UInt8] {
        Array(repeating: sender.asciiValue!, count: IdempotencyKey.senderLength) + [UInt8(index & 0xFF), UInt8(index >> 8)]
    }

    /// Applies sequence 1 of each client.
    static func applyOne(_ clients: some Sequence<[UInt8]>, to window: inout Window) {
        for client in clients {
            let key = IdempotencyKey(client: client, sequence: 1)
            guard case .apply = window.admit(key, waiter: "") else { Issue.record("\(key) is new"); continue }
            _ = window.answered(key, with: KeptAnswer(kind: .state, payload: [1]))
        }
    }

    /// Whether the window still tells sequence 1 of `client` from a new event.
    static func remembers(_ client: [UInt8], in window: inout Window) -> Bool {
        switch window.admit(IdempotencyKey(client: client, sequence: 1), waiter: "") {
        case .apply:
            _ = window.refused(IdempotencyKey(client: client, sequence: 1))
            return false
        case .answer, .appliedEarlier, .tooOld, .wait:
            return true
        }
    }

    static func forgottenClients(_ writes: (answers: [AnswerEntry], forgotten: [IdempotencyKey])) -> Set<[UInt8]> {
        Set(writes.forgotten.filter { $0.sequence == Window.sequencesMark }.map(\.client))
    }

    @Test func aSenderWithManyClientIdsForgetsItsOwnNeverAnotherSenders() {
        var window = Window()
        let alice = Self.bound("A", 0)
        Self.applyOne([alice], to: &window)
        _ = window.takeWrites()
        let mallory = (0..<(Window.maximumClients + 200)).map { Self.bound("M", $0) }
        Self.applyOne(mallory, to: &window)
        // Alice's answer left with the 128 kept, but her sequences stay: her repeat is not new.
        guard case .appliedEarlier = window.admit(IdempotencyKey(client: alice, sequence: 1), waiter: "") else {
            Issue.record("Alice's repeat is refused as applied, not applied again"); return
        }
        // Mallory's own least lately used went, and only they.
        let writes = window.takeWrites()
        #expect(Self.forgottenClients(writes) == Set(mallory.prefix(201)))
        #expect(!Self.remembers(mallory[0], in: &window))
        #expect(Self.remembers(mallory.last!, in: &window))
    }

    @Test func aNewSenderTakesFromTheSenderWithTheMostBooks() {
        var window = Window()
        let alice = (0..<2).map { Self.bound("A", $0) }
        let mallory = (0..<(Window.maximumClients - 2)).map { Self.bound("M", $0) }
        Self.applyOne(alice + mallory, to: &window)
        _ = window.takeWrites()
        // Bob's first client: Mallory has the most, so her least lately used goes, not Alice's
        // older ones.
        Self.applyOne([Self.bound("B", 0)], to: &window)
        #expect(Self.forgottenClients(window.takeWrites()) == [mallory[0]])
        #expect(alice.allSatisfy { Self.remembers($0, in: &window) })
    }

    @Test func twoSendersShareTheBooksEvenlyAtWorst() {
        var window = Window()
        let alice = (0..<600).map { Self.bound("A", $0) }
        Self.applyOne(alice, to: &window)
        Self.applyOne((0..<400).map { Self.bound("B", $0) }, to: &window)
        // Full. Bob's new clients take Alice's oldest while she has more, then his own.
        Self.applyOne((400..<600).map { Self.bound("B", $0) }, to: &window)
        let forgotten = Self.forgottenClients(window.takeWrites())
        #expect(forgotten.filter { $0.first == Character("A").asciiValue }.count == 100)
        #expect(forgotten.count == 200)
        #expect(Self.remembers(alice.last!, in: &window))
        #expect(!Self.remembers(alice[0], in: &window))
    }

    @Test func unboundIdsAreOneSenderForgottenLeastLatelyUsedFirst() {
        var window = Window()
        let clients = (0...Window.maximumClients).map { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        Self.applyOne(clients, to: &window)
        #expect(Self.forgottenClients(window.takeWrites()) == [clients[0]])
    }

    @Test func theSendersHoldAfterTheBooksComeBackFromTheStore() {
        var window = Window()
        let alice = Self.bound("A", 0)
        Self.applyOne([alice] + (0..<(Window.maximumClients - 1)).map { Self.bound("M", $0) }, to: &window)
        var restored = Window()
        restored.restore(window.takeWrites(replacingStored: true).answers)
        Self.applyOne((Window.maximumClients..<(Window.maximumClients + 50)).map { Self.bound("M", $0) }, to: &restored)
        let forgotten = Self.forgottenClients(restored.takeWrites())
        #expect(forgotten.count == 50 && !forgotten.contains(alice))
        #expect(Self.remembers(alice, in: &restored))
    }
}
