import Foundation
import Testing
@testable import ZeroMQ

@Suite(.timeLimit(.minutes(2))) struct IOLoopTests {
    @Test func dealerToRouterRoundTripThroughTwoLoops() async throws {
        let context = try ZMQContext()
        let (router, endpoint) = try makeRouter(context)
        let server = try IOLoop(name: "grove-test-srv")
        _ = server.add(router)
        server.start(EchoDelegate())
        let client = try LoopHarness(name: "grove-test-cli", socket: makeDealer(context, id: "client-1", endpoint: endpoint))

        client.send([bytes("ping"), bytes("1")])

        #expect(await client.inbox.wait(forCount: 1))
        #expect(client.inbox.items.map(\.frames) == [[bytes("ping"), bytes("1")]])
        #expect(client.inbox.items.first?.socket == client.socket)
        #expect(threadNames().contains("grove-test-srv"))
        client.loop.stop()
        server.stop()
        #expect(client.stops.items == [true])
        #expect(await finishes { context.terminate() })
    }

    @Test func routerMandatorySendToUnknownPeerReportsUnreachable() async throws {
        let context = try ZMQContext()
        let (router, _) = try makeRouter(context)
        let server = try LoopHarness(name: "mandatory", socket: router)

        server.send([bytes("nobody"), bytes("hello")])

        #expect(await server.failures.wait(forCount: 1))
        let failure = try #require(server.failures.items.first)
        #expect(failure.error.isPeerUnreachable)
        #expect(failure.socket == server.socket)
        #expect(failure.frames == [bytes("nobody"), bytes("hello")])
        // Reported once the grace for libzmq's transient EHOSTUNREACH is over, from the outbox.
        #expect(failure.error.description.contains("unreachable"))
        #expect(await server.ask { $0.pending(server.socket) } == 0)
        server.loop.stop()
        #expect(await finishes { context.terminate() })
    }

    @Test func multipartFramesSurviveTheLoopsIncludingEmptyOnes() async throws {
        let context = try ZMQContext()
        let (router, endpoint) = try makeRouter(context)
        let server = try LoopHarness(name: "frames-srv", socket: router)
        let client = try LoopHarness(name: "frames-cli", socket: makeDealer(context, id: "c", endpoint: endpoint))
        let message: [[UInt8]] = [[], [1, 2], [], []]

        client.send(message)

        #expect(await server.inbox.wait(forCount: 1))
        #expect(server.inbox.items.first?.frames == [bytes("c")] + message)
        server.send([bytes("c")] + message)
        #expect(await client.inbox.wait(forCount: 1))
        #expect(client.inbox.items.first?.frames == message)
        client.loop.stop()
        server.loop.stop()
        #expect(await finishes { context.terminate() })
    }

    @Test func tenThousandMessagesArriveInOrder() async throws {
        let context = try ZMQContext()
        let (router, endpoint) = try makeRouter(context)
        let server = try LoopHarness(name: "order-srv", socket: router)
        let dealer = try makeDealer(context, id: "sender", endpoint: endpoint)
        // A small high-water mark makes the client's outbox take part.
        try dealer.setSendHighWaterMark(50)
        let client = try LoopHarness(name: "order-cli", socket: dealer)
        let count = 10_000

        for start in stride(from: 0, to: count, by: 1000) {
            client.loop.post(contentsOf: (start..<start + 1000).map { index in
                Outbound(socket: client.socket, frames: [withUnsafeBytes(of: UInt32(index).littleEndian, Array.init)])
            })
        }

        #expect(await server.inbox.wait(forCount: count, within: .seconds(30)))
        let indices = server.inbox.items.map { message in
            message.frames[1].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian }
        }
        #expect(indices == (0..<UInt32(count)).map { $0 })
        #expect(server.inbox.items.allSatisfy { $0.frames[0] == bytes("sender") })
        #expect(client.failures.items.isEmpty)
        client.loop.stop()
        server.loop.stop()
        #expect(await finishes { context.terminate() })
    }

    /// With batches, a message count alone does not bound a loop turn: a turn also stops once it
    /// read `LoopCore.maxBatchBytes`, so ticks (heartbeat checks) keep coming.
    @Test func aLoopTurnReadsAtMostItsByteBudget() async throws {
        let context = try ZMQContext()
        // inproc: a sent message is in the router's queue when `send` returns, so all of it
        // waits there before the loop starts, with no I/O thread to wait for.
        let endpoint = "inproc://grove-budget-\(UUID().uuidString)"
        let router = try makeSocket(context, .router)
        try router.bind(endpoint)
        let dealer = try makeDealer(context, id: "big-sender", endpoint: endpoint)
        let message = [UInt8](repeating: 7, count: 1 << 20)
        let count = 3 * LoopCore.maxBatchBytes / message.count
        for _ in 0..<count { #expect(try dealer.send([message], dontWait: false)) }
        let turns = Recorder<Int>()
        let loop = try IOLoop(name: "budget")
        _ = loop.add(router)
        loop.start(ForwardingDelegate(onBatch: { batch in
            turns.append(batch.reduce(0) { $0 + $1.frames.reduce(0) { $0 + $1.count } })
        }))
        let total = count * message.count
        #expect(await turns.wait(within: .seconds(10), until: { $0.reduce(0, +) >= total }))
        // Each turn stops at the first message that reaches the budget.
        #expect(turns.items.allSatisfy { $0 <= LoopCore.maxBatchBytes + message.count + 64 }, "\(turns.items)")
        // And it did stop there: a turn reached the budget (the data was all waiting).
        #expect(turns.items.contains { $0 >= LoopCore.maxBatchBytes }, "\(turns.items)")
        #expect(turns.items.count >= 3)
        loop.stop()
        dealer.close()
        #expect(await finishes { context.terminate() })
    }

    @Test func stopIsIdempotentAndTheContextTerminates() async throws {
        let context = try ZMQContext()
        // Messages queued for a peer that never comes: LINGER 0 lets the context end anyway.
        let client = try LoopHarness(name: "stop", socket: makeDealer(context, id: "lonely", endpoint: uniqueEndpoint()))
        client.send([bytes("never delivered")])
        #expect(await client.ask { _ in true } == true)

        #expect(await finishes {
            DispatchQueue.concurrentPerform(iterations: 4) { _ in client.loop.stop() }
            client.loop.stop()
        })
        #expect(client.stops.items == [true])
        client.send([bytes("after stop")])
        // Recorded here, asserted on the test's task: the loop's thread has ended, so anything
        // that ran the work would have run it by the time the context is gone.
        let ranAfterStop = Recorder<Bool>()
        client.loop.execute { _ in ranAfterStop.append(true) }
        #expect(await finishes { context.terminate() })
        context.terminate()
        #expect(ranAfterStop.items.isEmpty, "work given to a stopped loop ran")
    }

    @Test func stopFromInsideACallbackEndsTheLoop() async throws {
        let context = try ZMQContext()
        let client = try LoopHarness(name: "self-stop", socket: makeDealer(context, id: "x", endpoint: uniqueEndpoint()))
        let loop = client.loop

        loop.execute { _ in loop.stop() }

        #expect(await client.stops.wait(forCount: 1))
        #expect(await finishes { loop.stop() })
        #expect(await finishes { context.terminate() })
    }

    @Test func aLoopNeverStartedClosesItsSocketsOnStop() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(name: "idle")
        _ = loop.add(try makeDealer(context, id: "x", endpoint: uniqueEndpoint()))

        loop.stop()

        #expect(await finishes { context.terminate() })
    }

    /// A replaced socket takes what it queued with it; the new one sends and receives under the
    /// same id (the loop polls it from then on).
    @Test func aReplacedSocketDropsWhatItQueuedAndTheNewOneServes() async throws {
        let context = try ZMQContext()
        let endpoint = uniqueEndpoint()
        let client = try LoopHarness(name: "replace-cli", socket: makeDealer(context, id: "w", endpoint: endpoint))
        client.send([bytes("stale")])  // nobody listens yet: it waits in the socket
        let replaced = await client.ask { io in
            guard let fresh = try? makeDealer(context, id: "w", endpoint: endpoint) else { return false }
            io.replace(client.socket, with: fresh)
            return true
        }
        #expect(replaced == true)
        client.send([bytes("fresh")])
        client.send([bytes("last")])
        let router = try makeSocket(context, .router)
        try router.setRouterMandatory(true)
        try router.bind(endpoint)
        let server = try LoopHarness(name: "replace-srv", socket: router)

        #expect(await server.inbox.wait(forCount: 2))
        #expect(server.inbox.items.map(\.frames) == [[bytes("w"), bytes("fresh")], [bytes("w"), bytes("last")]])
        server.send([bytes("w"), bytes("reply")])
        #expect(await client.inbox.wait(forCount: 1))
        #expect(client.inbox.items.map(\.frames) == [[bytes("reply")]])
        client.loop.stop()
        server.loop.stop()
        #expect(await finishes { context.terminate() })
    }

    @Test func ticksKeepComing() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(name: "ticks", tickInterval: .milliseconds(5))
        _ = loop.add(try makeDealer(context, id: "x", endpoint: uniqueEndpoint()))
        let ticks = Recorder<ContinuousClock.Instant>()
        loop.start(ForwardingDelegate(onBatch: { _ in }, onTick: { ticks.append($0) }))

        #expect(await ticks.wait(forCount: 3))
        #expect(ticks.items == ticks.items.sorted())
        loop.stop()
        #expect(await finishes { context.terminate() })
    }
}

/// Names of this process's threads (Linux).
private func threadNames() -> Set<String> {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return Set(tasks.compactMap { task in
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    })
}
