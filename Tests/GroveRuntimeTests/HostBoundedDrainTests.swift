import Grove
@testable import GroveRuntime
import Synchronization
import Testing

/// Hosts that share an executor (a worker's I/O thread) drain a bounded number of mailbox
/// batches per turn, and ask for another turn when work may be left: results that arrive as fast
/// as they are handled cannot hold the executor.
@Suite(.timeLimit(.minutes(2)))
struct HostBoundedDrainTests {
    /// Each answer sends the next event, until `last`: the mailbox never empties within a round.
    final class Chain: Sendable {
        let host = Mutex<MachineHost<Probe>?>(nil)
        let answered = Mutex<[UInt64]>([])
        let drainsAsked = Mutex(0)
        let last: UInt64

        init(last: UInt64) { self.last = last }

        func answer(_ token: UInt64, _ result: Result<Probe.State, HostError>) {
            answered.withLock { $0.append(token) }
            if token < last, let host = host.withLock({ $0 }) { try? host.send(.note("\(token + 1)"), replyToken: token + 1) }
        }
    }

    static func host(_ chain: Chain, capacity: Int) -> MachineHost<Probe> {
        var options = HostOptions<Probe>()
        options.mailboxCapacity = capacity
        options.replyHandler = { token, _, result, _ in chain.answer(token, result) }
        options.drainScheduler = { chain.drainsAsked.withLock { $0 += 1 } }
        let host = MachineHost(Probe.self, env: Probe.Env(), options: options)
        chain.host.withLock { $0 = host }
        return host
    }

    @Test func aDrainStopsAtItsRoundsAndAsksForAnother() async throws {
        let chain = Chain(last: 20)
        let host = Self.host(chain, capacity: 2)
        host.start()
        try host.send(.note("1"), replyToken: 1)
        #expect(chain.drainsAsked.withLock { $0 } == 1, "the first event woke the host")
        await host.flush(rounds: 3)
        #expect(chain.answered.withLock { $0 } == [1, 2, 3])
        #expect(chain.drainsAsked.withLock { $0 } == 2, "work was left: another drain was asked for")
        await host.flush(rounds: 100)
        #expect(chain.answered.withLock { $0 } == Array(1 ... 20))
        #expect(chain.drainsAsked.withLock { $0 } == 2, "the mailbox emptied: nothing more to ask")
        // Every event was counted out of the mailbox, drains cut short included: it takes a full
        // capacity again.
        try host.send(.note("a"), replyToken: 100)
        try host.send(.note("b"), replyToken: 101)
        #expect(throws: HostError.self) { try host.send(.note("c"), replyToken: 102) }
        await host.stop()
        chain.host.withLock { $0 = nil }
    }
}
