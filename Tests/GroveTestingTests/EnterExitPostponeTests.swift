import Foundation
import Grove
import GroveRuntime
import GroveTesting
import Synchronization
import Testing

/// A link that says, as outputs, when it leaves and enters each state (exit and enter actions)
/// and what its transitions did, so a test sees their order; while connecting it keeps what it is
/// asked to send (postpone) until it is online. `hurry` goes online and postpones at once;
/// `queue` puts a postpone inside a merge, where it keeps nothing.
enum Link: StateScoped {
    enum State: Equatable, Sendable, Codable { case offline, connecting(attempt: Int), online(sent: [String]), closed }
    enum Event: Equatable, Sendable, Codable {
        case connect, retry, connected, drop, close
        case send(String), hurry(String), queue(String)
    }
    enum Output: Equatable, Sendable { case entered(String), left(String), did(String) }
    static var initialState: State { .offline }
    static func isTerminal(_ state: State) -> Bool { state == .closed }
    static func enter(_ state: State) -> Effect { .output(.entered(stateKey(state))) }
    static func exit(_ state: State) -> Effect { .output(.left(stateKey(state))) }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.offline, .connect):
            state = .connecting(attempt: 1)
            return .output(.did("connect"))
        case (.connecting(let attempt), .retry):
            state = .connecting(attempt: attempt + 1)
            return .output(.did("retry"))
        case (.connecting, .connected):
            state = .online(sent: [])
            return .none
        case (.connecting, .send):
            return .postpone
        case (.connecting, .hurry):
            state = .online(sent: [])
            return .postpone
        case (.connecting, .queue(let text)):
            return .merge([.postpone, .output(.did("queue \(text)"))])
        case (.online(let sent), .send(let text)), (.online(let sent), .hurry(let text)):
            state = .online(sent: sent + [text])
            return .none
        case (.online, .drop):
            state = .connecting(attempt: 1)
            return .output(.did("drop"))
        case (.offline, .close), (.connecting, .close), (.online, .close):
            state = .closed
            return .none
        case (.offline, _), (.connecting, _), (.online, _), (.closed, _):
            return .unhandled
        }
    }
}

/// What a host emitted, in order, and what it reported.
private final class Seen: Sendable {
    let outputs = Mutex<[Link.Output]>([])
    let ignored = Mutex(0)

    var options: HostOptions<Link> {
        HostOptions(diagnostics: { [self] diagnostic in
            if case .postponeIgnored = diagnostic { ignored.withLock { $0 += 1 } }
        }, trace: { [self] trace in
            if case .output(let output) = trace { outputs.withLock { $0.append(output) } }
        })
    }
}

@Suite("Enter and exit actions, postpone", .timeLimit(.minutes(2)))
struct EnterExitPostponeTests {
    @Test("The initial state's enter runs once, when the machine starts")
    func initialEnterRunsOnceAtStart() async {
        let store = TestStore(Link.self)
        await store.receiveOutput(.entered("offline"))
        await store.sendUnhandled(.connected)
        await store.finish()
    }

    @Test("Enter runs on every transition into a state, whatever the event; exit on every one out; exit, transition, enter in that order")
    func enterAndExitRunOnEveryChange() async {
        let store = TestStore(Link.self)
        await store.receiveOutput(.entered("offline"))
        await store.send(.connect) { $0 = .connecting(attempt: 1) }
        await store.receiveOutput(.left("offline"))
        await store.receiveOutput(.did("connect"))
        await store.receiveOutput(.entered("connecting"))
        await store.send(.connected) { $0 = .online(sent: []) }
        await store.receiveOutput(.left("connecting"))
        await store.receiveOutput(.entered("online"))
        await store.send(.drop) { $0 = .connecting(attempt: 1) }
        await store.receiveOutput(.left("online"))
        await store.receiveOutput(.did("drop"))
        await store.receiveOutput(.entered("connecting"))
        await store.finish()
    }

    @Test("A transition that keeps the state's key runs neither exit nor enter")
    func sameKeyRunsNeither() async {
        let store = TestStore(Link.self)
        await store.receiveOutput(.entered("offline"))
        await store.send(.connect) { $0 = .connecting(attempt: 1) }
        await store.receiveOutput(.left("offline"))
        await store.receiveOutput(.did("connect"))
        await store.receiveOutput(.entered("connecting"))
        await store.send(.retry) { $0 = .connecting(attempt: 2) }
        await store.receiveOutput(.did("retry"))
        await store.finish()
    }

    @Test("Postponed events are delivered again, in the order they came, when the state changes")
    func postponedInOrderOnChange() async {
        let store = TestStore(Link.self)
        await store.receiveOutput(.entered("offline"))
        await store.send(.connect) { $0 = .connecting(attempt: 1) }
        await store.send(.send("a"))
        await store.send(.send("b"))
        #expect(await store.host.postponedEvents == [.send("a"), .send("b")])
        await store.send(.connected) { $0 = .online(sent: []) }
        await store.receive(.send("a")) { $0 = .online(sent: ["a"]) }
        await store.receive(.send("b")) { $0 = .online(sent: ["a", "b"]) }
        #expect(await store.host.postponedEvents.isEmpty)
        for output: Link.Output in [.left("offline"), .did("connect"), .entered("connecting"), .left("connecting"), .entered("online")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("Postponed events go ahead of what waits in the mailbox")
    func postponedAheadOfTheMailbox() async throws {
        let host = MachineHost(Link.self)
        // All queued before the first run: `c` waits in the mailbox when `connected` changes the state.
        for event: Link.Event in [.connect, .send("a"), .send("b"), .connected, .send("c")] { try host.send(event) }
        host.start()
        await host.flush()
        #expect(await host.state == .online(sent: ["a", "b", "c"]))
        await host.stop()
    }

    @Test("A transition that changes the state and postpones has its event again at once, after those postponed before")
    func postponeWithAChangeRetriesAtOnce() async {
        let store = TestStore(Link.self)
        await store.receiveOutput(.entered("offline"))
        await store.send(.connect) { $0 = .connecting(attempt: 1) }
        await store.send(.send("a"))
        await store.send(.hurry("h")) { $0 = .online(sent: []) }
        await store.receive(.send("a")) { $0 = .online(sent: ["a"]) }
        await store.receive(.hurry("h")) { $0 = .online(sent: ["a", "h"]) }
        for output: Link.Output in [.left("offline"), .did("connect"), .entered("connecting"), .left("connecting"), .entered("online")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("A postpone inside a merge keeps nothing, runs the rest and is reported")
    func postponeInsideAMergeIsIgnored() async throws {
        let seen = Seen()
        let host = MachineHost(Link.self, options: seen.options)
        host.start()
        _ = try await host.sendAndWait(.connect)
        _ = try await host.sendAndWait(.queue("q"))
        #expect(await host.postponedEvents.isEmpty)
        #expect(seen.ignored.withLock { $0 } == 1)
        #expect(seen.outputs.withLock { $0 }.last == .did("queue q"))
        await host.stop()
    }

    @Test("Postponed events survive a snapshot; the restored machine does not enter its state again")
    func postponedSurviveASnapshot() async throws {
        let original = MachineHost(Link.self)
        original.start()
        _ = try await original.sendAndWait(.connect)
        _ = try await original.sendAndWait(.send("a"))
        let snapshot = try JSONDecoder().decode(Snapshot<Link>.self, from: JSONEncoder().encode(await original.snapshot()))
        await original.stop()
        #expect(snapshot.postponed == [.send("a")])

        let seen = Seen()
        let restored = MachineHost(restoring: snapshot, options: seen.options)
        restored.start()
        await restored.flush()
        #expect(seen.outputs.withLock { $0 }.isEmpty, "no enter at a restore: the snapshot carries what it started")
        #expect(await restored.postponedEvents == [.send("a")])
        #expect(try await restored.sendAndWait(.connected) == .online(sent: ["a"]))
        #expect(seen.outputs.withLock { $0 } == [.left("connecting"), .entered("online")])
        await restored.stop()
    }

    @Test("A snapshot from before postpone decodes with nothing postponed")
    func formerSnapshotDecodes() throws {
        let former = #"{"state":{"connecting":{"attempt":1}},"timers":[],"interruptedIO":[],"queuedEvents":[{"send":{"_0":"a"}}],"omittedEffects":[]}"#
        let snapshot = try JSONDecoder().decode(Snapshot<Link>.self, from: Data(former.utf8))
        #expect(snapshot.postponed == nil)
        #expect(snapshot.queuedEvents == [.send("a")])
        #expect(snapshot.state == .connecting(attempt: 1))
    }

    @Test("Entering a terminal state emits the exit and enter outputs and drops what was postponed")
    func terminalDropsPostponed() async throws {
        let seen = Seen()
        let host = MachineHost(Link.self, options: seen.options)
        host.start()
        _ = try await host.sendAndWait(.connect)
        _ = try await host.sendAndWait(.send("a"))
        _ = try? await host.sendAndWait(.close)
        let termination = try await host.termination()
        #expect(termination.droppedEvents == [.send("a")])
        #expect(seen.outputs.withLock { $0 }.suffix(2) == [.left("connecting"), .entered("closed")])
    }
}
