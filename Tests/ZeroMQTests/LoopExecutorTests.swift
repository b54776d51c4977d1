import Foundation
import Testing
@testable import ZeroMQ

/// An actor that lives with an I/O loop: its code runs on the loop's thread.
actor LoopBound {
    let executor: LoopExecutor
    var calls = 0
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(_ loop: IOLoop) { executor = loop.executor }

    func threadName() -> String? {
        calls += 1
        return Thread.current.name
    }

    func count() -> Int { calls }

    func bump() { calls += 1 }
}

@Suite(.timeLimit(.minutes(2))) struct LoopExecutorTests {
    @Test func anActorOnTheLoopsExecutorRunsOnTheLoopThread() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(name: "grove-exec")
        _ = loop.add(try makeSocket(context, .dealer))
        loop.start(ForwardingDelegate(onBatch: { _ in }))
        let bound = LoopBound(loop)
        for _ in 0 ..< 100 { #expect(await bound.threadName() == "grove-exec") }
        #expect(!loop.executor.isIsolatingCurrentContext()!, "the test's thread is not the loop's")
        loop.stop()
        // After the loop ended, its actors still run, one job at a time, on a queue of their own.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 200 { group.addTask { await bound.bump() } }
        }
        #expect(await bound.count() == 300)
        #expect(await finishes { context.terminate() })
    }

    /// Jobs enqueued on a loop that never started run once it is stopped.
    @Test func aLoopStoppedBeforeItStartedStillRunsItsActors() async throws {
        let loop = try IOLoop(name: "grove-never")
        let bound = LoopBound(loop)
        let answered = Recorder<Int>()
        Task { answered.append(await bound.count()) }
        #expect(await eventually { loop.mailbox.hasCommands }, "the call waits in the loop's queue")
        loop.stop()
        #expect(await answered.wait(forCount: 1), "the waiting call ran once the loop stopped")
        #expect(answered.items == [0])
        await bound.bump()
        #expect(await bound.count() == 1)
    }

    /// A delegate callback runs on the loop thread outside any job: code isolated to the loop's
    /// actors may run there synchronously (what a worker does with each received batch).
    @Test func aDelegateCallbackMayAssumeTheLoopsIsolation() async throws {
        let context = try ZMQContext()
        let (router, endpoint) = try makeRouter(context)
        let loop = try IOLoop(name: "grove-assume")
        _ = loop.add(router)
        let bound = LoopBound(loop)
        let received = Recorder<Int>()
        loop.start(ForwardingDelegate(onBatch: { batch in
            for _ in batch { bound.assumeIsolated { $0.bump() } }
            received.append(batch.count)
        }))
        let client = try LoopHarness(name: "grove-assume-c", socket: makeDealer(context, id: "c", endpoint: endpoint))
        for index in 0 ..< 50 { client.send([bytes("\(index)")]) }
        #expect(await received.wait { $0.reduce(0, +) >= 50 })
        #expect(await bound.count() == 50)
        client.loop.stop()
        loop.stop()
        #expect(await finishes { context.terminate() })
    }
}
